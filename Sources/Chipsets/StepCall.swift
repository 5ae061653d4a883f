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

    mutating func visit<C: Chipset>(_ chipset: inout C) -> SetupStep {
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
