import BLEHost

/// One set-up step on the active chipset.
struct StepCall: ChipsetVisitor {
    enum Kind {
        case begin, timer, shutdown
        case resume(UnsafeRawBufferPointer)
        case handle(UnsafeRawBufferPointer)
        case provide(UnsafeRawBufferPointer, UnsafeRawBufferPointer)
    }
    let kind: Kind
    let context: ChipsetContext
    var packet: Capacity.HCIPacket

    init(_ kind: Kind, _ context: ChipsetContext, _ packet: Capacity.HCIPacket) {
        self.kind = kind
        self.context = context
        self.packet = packet
    }

    /// Out of line, one function per chipset: inlined into `VendorSetup.run`,
    /// the four set-ups made one 10 KB function whose spills and shared frame
    /// cost 1.9 KB more than the four apart.
    @inline(never) mutating func visit<C: Chipset>(_ chipset: inout C) -> SetupStep {
        switch kind {
        case .begin: chipset.start(context: context, into: &packet)
        case .timer: chipset.resume(into: &packet)
        case .shutdown: chipset.shutdown(into: &packet)
        case .resume(let event): chipset.resume(afterProbe: event, context: context, into: &packet)
        case .handle(let event): chipset.handle(event: event, into: &packet)
        case .provide(let firmware, let companion): chipset.provide(firmware: firmware, companion: companion, into: &packet)
        }
    }
}
