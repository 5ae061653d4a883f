import BLEHost

/// The set-up the driver runs before the host's bring-up, for whichever
/// chipset of `ChipsetTable` the controller is. A USB dongle is known by its
/// VID:PID (the chipset says whether it starts at HCI Reset or after the
/// probe); on a UART or virtual controller the probe (Reset, Read Local
/// Version) runs first and the first chipset that recognises the answer takes
/// over. Names no vendor: everything chipset-specific is behind the table.
public struct VendorSetup: ControllerSetup {
    public enum Plan: Equatable {
        /// Nothing to load.
        case none
        /// Reset and Read Local Version, then the recognising chipset (only
        /// `only` when given: a USB dongle's VID:PID already chose it).
        case probe(only: Int?)
        /// Entry `index`'s own set-up from HCI Reset on.
        case fromReset(Int)
    }

    enum ProbePhase: Equatable { case idle, reset, readLocalVersion, handedOver, done, failed }

    public let plan: Plan
    public let context: ChipsetContext
    public var table = ChipsetTable()
    /// The entry running the set-up, nil while probing or when none took the controller.
    public private(set) var active: Int? = nil
    /// What the probe's Read Local Version said.
    public private(set) var version: LocalVersion? = nil
    var probe = ProbePhase.idle
    var packet = Capacity.HCIPacket()
    /// The active chipset's state after its last step.
    public private(set) var status = ChipsetStatus()

    public init(plan: Plan, context: ChipsetContext = ChipsetContext()) {
        self.plan = plan
        self.context = context
    }

    /// The plan for a transport: by VID:PID on USB; the probe on other
    /// transports when asked (`probe`: every chipset), and on a UART for the
    /// chipsets probed on every UART; else none.
    public static func plan(for context: inout ChipsetContext, probe: Bool) -> Plan {
        if context.overUSB {
            var claim = USBClaim(vendor: context.usbVendor, product: context.usbProduct, vendorClass: context.usbVendorClass)
            guard let index = ChipsetTable.first(&claim), let start = claim.start else { return .none }
            return start == .fromReset ? .fromReset(index) : .probe(only: index)
        }
        context.probeEveryChipset = probe
        if probe { return .probe(only: nil) }
        var uart = ProbedOnEveryUART()
        return context.uartBaud > 0 && ChipsetTable.first(&uart) != nil ? .probe(only: nil) : .none
    }

    /// The probe's Read Local Version was refused or short.
    public var probeFailed: Bool { probe == .failed }

    public mutating func begin() -> SetupStep {
        switch plan {
        case .none: return .done
        case .probe:
            probe = .reset
            packet.setCommand(HCIOpcode.reset)
            return .send
        case .fromReset(let index):
            active = index
            return run(.begin, index)
        }
    }

    public mutating func handle(event: UnsafeRawBufferPointer) -> SetupStep {
        if let active { return run(.handle(event), active) }
        return handleProbe(event)
    }

    /// Reset, then Read Local Version; only their Command Completes move it
    /// (a stray Command Status or vendor event is ignored, as Linux and Bumble do).
    mutating func handleProbe(_ event: UnsafeRawBufferPointer) -> SetupStep {
        guard event.count >= 6, event[0] == HCIEventCode.commandComplete else { return .wait }
        let opcode = UInt16(event[3]) | UInt16(event[4]) << 8
        switch probe {
        case .reset:
            guard opcode == HCIOpcode.reset else { return .wait }
            probe = .readLocalVersion
            packet.setCommand(HCIOpcode.readLocalVersion)
            return .send
        case .readLocalVersion:
            guard opcode == HCIOpcode.readLocalVersion else { return .wait }
            guard let found = LocalVersion(commandComplete: event) else {
                probe = .failed
                return .failed
            }
            version = found
            var recognise = Recognise(version: found, context: context)
            let taker: Int?
            if case .probe(let only?) = plan {
                taker = ChipsetTable.ask(only, &recognise) == true ? only : nil
            } else {
                taker = ChipsetTable.first(&recognise)
            }
            guard let taker else {
                probe = .done
                return .done
            }
            probe = .handedOver
            active = taker
            return run(.resume(event), taker)
        case .idle, .handedOver, .done, .failed:
            return .wait
        }
    }

    public mutating func provide(firmware: UnsafeRawBufferPointer, companion: UnsafeRawBufferPointer) -> SetupStep {
        guard let active else { return .done }
        return run(.provide(firmware, companion), active)
    }

    public mutating func resume() -> SetupStep {
        guard let active else { return .wait }
        return run(.timer, active)
    }

    public mutating func shutdown() -> SetupStep {
        guard let active else { return .done }
        return run(.shutdown, active)
    }

    /// One step on entry `index`; the status the driver and the board read is taken after it.
    mutating func run(_ kind: StepCall.Kind, _ index: Int) -> SetupStep {
        var call = StepCall(kind, context, packet)
        let step = table.visit(index, &call) ?? .done
        packet = call.packet
        var query = StatusQuery()
        status = table.visit(index, &query) ?? ChipsetStatus()
        return step
    }

    public mutating func command(into packet: inout Capacity.HCIPacket) { packet = self.packet }

    /// The chipset running the set-up, described; nil while probing or when none took the controller.
    public func describe() -> ChipsetDescription? {
        guard let active else { return nil }
        return table.read(active, Describe(index: active))
    }

    /// More about the active chipset's failure (`Chipset.writeFailureDetail`)
    /// into `detail`: left empty when it has nothing to add or none took the controller.
    public func writeFailureDetail(into detail: inout Capacity.ChipsetText) {
        guard let active else { return }
        withUnsafeMutablePointer(to: &detail) { _ = table.read(active, DescribeFailure(out: $0)) }
    }

    /// The probe: 10 s per answer (as the Realtek ROM's check always had).
    public var answerTimeout: UInt64 { active == nil ? 10_000 : status.answerTimeout }
    public var pause: UInt64 { status.pause }
    public var commandOnBulk: Bool { status.commandOnBulk }
    public var eventsOnBulk: Bool { status.eventsOnBulk }
}
