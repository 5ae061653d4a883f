/// The sans-IO BLE host: HCI packets and time in; HCI packets and HostEvents out.
///
/// The platform feeds every packet from the controller to `handlePacket`, calls
/// `tick` when `nextDeadline` passes, sends whatever `nextOutgoing` yields and
/// drains `nextEvent`. Nothing here does I/O, reads a clock or allocates.
/// Non-copyable: the host is one block of static memory (see Capacity), reached
/// only in place; a copy would be a compile error.
public struct Host: ~Copyable {
    let pin = InPlacePin()
    public static var connectionCapacity: Int { Capacity.links }
    /// `connectionCapacity` read from memory, for the loops over the links: they
    /// stay loops (over the constant each was unrolled: 500 B for one cold loop,
    /// 285 B for a count of the links in use).
    let linkSlots = Host.connectionCapacity
    /// A line repeated for one peer (a refused SMP packet) is written at most this often.
    public static let repeatLineInterval: UInt64 = 60_000

    public var configuration: HostConfiguration
    public internal(set) var controller = ControllerInfo()
    public internal(set) var server: ATTServer
    /// Our GATT client, its state per link (indexed as `connections`).
    public internal(set) var client = GATTClient()
    public internal(set) var connections: Capacity.PerLink<Connection> = InlineArray(filling: { Connection() })
    public internal(set) var now: UInt64 = 0

    // HCI command flow (Vol 4 Part E §4.4).
    var commandQueue = Capacity.CommandRing(filler: Capacity.HCIPacket())
    var commandCredits = 1
    var outstandingOpcode: UInt16? = nil
    /// First parameter byte of the outstanding command (enable flags).
    var outstandingParameter: UInt8 = 0
    var commandDeadline: UInt64 = 0

    /// ACL that arrived before its LE Connection Complete: events and data travel
    /// on different USB endpoints, so the first PDU of a link can overtake the
    /// event that announces it. Held briefly, replayed when the link appears.
    var earlyACL = Capacity.EarlyACLRing(filler: Capacity.HCIPacket())
    var linkAppeared = false

    // ACL flow: credits from Number Of Completed Packets (§4.1.1).
    var aclCredits = 0
    var aclQueue = ACLTransmitQueue()
    /// Answers each link is owed that found no room in the transmit queue,
    /// sent before anything else of the link (HostFlowControl.swift); beside
    /// `connections`, so a request is served into them with the bearer in hand.
    var owed: Capacity.PerLink<OwedAnswers> = InlineArray { _ in OwedAnswers() }
    /// Optional commands the controller left unanswered: not sent again.
    var unansweredOptional = false
    /// The identifier of our last L2CAP signalling request (never 0, Vol 3 Part A §4).
    var signalingIdentifier: UInt8 = 0
    /// Some link may owe answers (cleared when a pass over the links finds none).
    var mayOwe = false
    /// Where the next pass over owing links starts (round robin).
    var owedCursor = 0
    /// A PDU left the transmit queue since the driver last polled the application.
    public internal(set) var transmitRoomFreed = false

    var events = Capacity.EventRing(filler: .shutdownComplete(controllerReset: false))
    /// The reports of the `.advertisingReport` events in `events`, in the same order.
    var reports = Capacity.ReportRing(filler: AdvertisingReport())
    /// The report of the `.advertisingReport` event taken last.
    public internal(set) var advertisingReport = AdvertisingReport()
    /// A `.droppedOutput(.eventQueueFull)` waits in the event ring's reserved slot.
    var eventLossQueued = false
    /// Commands and PDUs dropped with their queue full, reported at most once a minute.
    var outputDropLine = RepeatedLine()

    enum State: Equatable { case off, initializing, ready, shuttingDown, stopped }
    var state = State.off
    var initStep = InitStep.reset

    // GAP: the peripheral's advertising, the central's scanning and connecting.
    var advertiser = Advertiser()
    var scanner = Scanner()

    var shutdownStarted: UInt64 = 0
    var shutdownResetQueued = false

    /// Times the controller was re-initialised after a timeout or hardware error.
    public internal(set) var recoveries = 0
    /// Input dropped (malformed, unknown link or channel); each drop is also a `.droppedInput` event.
    public internal(set) var droppedInput = 0
    /// Output dropped because its queue was full (commands, PDUs, events);
    /// each is also a `.droppedOutput` event, except lost events after the
    /// first of an overflow.
    public internal(set) var droppedOutput = 0
    /// The three above by kind and reason, and the links made (for metrics).
    public internal(set) var counts = HostCounts()

    public init(configuration: HostConfiguration, database: consuming GATTDatabase) {
        self.configuration = configuration
        self.configuration.maxConnections = max(1, min(configuration.maxConnections, Host.connectionCapacity))
        server = ATTServer(database: database)
    }

    // MARK: - Platform API

    public var isReady: Bool { state == .ready }
    public var isStopped: Bool { state == .stopped }
    public var connectionCount: Int { countConnections() }

    /// Out of line, as `connectionIndex`: as loops they are small enough to be
    /// inlined at every caller, which costs more than the call.
    @inline(never) func countConnections() -> Int {
        var n = 0
        for i in 0..<linkSlots where connections[i].inUse { n += 1 }
        return n
    }

    /// The peer of connection slot `slot` (0..<connectionCapacity) when it is in use.
    public func peer(slot: Int) -> BDAddress? {
        connections[slot].inUse ? connections[slot].peer : nil
    }

    /// Starts controller bring-up.
    public mutating func start(now: UInt64) {
        self.now = now
        beginInitialization()
    }

    /// The next time `tick` must run, if any timer is armed.
    public func nextDeadline() -> UInt64? {
        var deadline: UInt64? = nil
        func consider(_ t: UInt64) { deadline = min(deadline ?? t, t) }
        if outstandingOpcode != nil { consider(commandDeadline) }
        if state == .shuttingDown, !shutdownResetQueued { consider(shutdownStarted + configuration.shutdownGrace) }
        if let t = scanner.deadline { consider(t) }
        for i in 0..<linkSlots where connections[i].inUse {
            if let t = client.links[i].deadline { consider(t) }
            if let t = idleDeadline(i) { consider(t) }
        }
        return deadline
    }

    /// Moves the host's clock when no timer is due (the driver knows when none is).
    public mutating func setClock(_ now: UInt64) { self.now = now }

    /// Runs timers due at `now`.
    public mutating func tick(now: UInt64) {
        self.now = now
        if let opcode = outstandingOpcode, now >= commandDeadline {
            if state == .ready || state == .shuttingDown, Host.isOptional(opcode) {
                return optionalCommandUnanswered(opcode)
            }
            if state == .shuttingDown {
                // The controller is gone or stuck; nothing more to tidy up.
                finishShutdown()
                return
            }
            push(.controllerTimeout(opcode: opcode, resetting: configuration.recoversController))
            outstandingOpcode = nil
            if configuration.recoversController { reinitialize(after: .commandTimeout) }
            return
        }
        if state == .shuttingDown, !shutdownResetQueued, now >= shutdownStarted + configuration.shutdownGrace {
            queueShutdownReset()
        }
        for i in 0..<linkSlots where connections[i].inUse && !connections[i].disconnecting {
            guard let deadline = idleDeadline(i), now >= deadline else { continue }
            closeLink(i, .idleDisconnect(connection: connections[i].handle, peer: connections[i].peer))
        }
        tickCentral()
    }

    /// Reports why a link is closed, then closes it. Out of line: the idle and
    /// ATT timeouts of `tick` each inlined both calls.
    @inline(never) mutating func closeLink(_ index: Int, _ event: HostEvent) {
        push(event)
        disconnect(connection: connections[index].handle, reason: HCIStatus.remoteUserTerminated)
    }

    /// When an idle link of a central (we are its peripheral) is due to be closed.
    func idleDeadline(_ index: Int) -> UInt64? {
        guard configuration.idleTimeout > 0, state == .ready, !connections[index].isCentral,
              !connections[index].disconnecting else { return nil }
        return connections[index].lastRequest + configuration.idleTimeout
    }

    /// The platform lost the H4 framing (noise on a UART, garbage on a socket):
    /// everything in flight is suspect, so the controller is reset and brought
    /// up again, and advertising or scanning resumes as after any recovery.
    public mutating func resynchronize(now: UInt64) {
        self.now = now
        guard state != .off, state != .stopped else { return }
        if state == .shuttingDown { return finishShutdown() }
        reinitialize(after: .framingLoss)
    }

    public var hasEvents: Bool { !events.isEmpty }

    /// Takes the next HostEvent. An `.advertisingReport`'s report is then
    /// `advertisingReport`, until the next call.
    public mutating func nextEvent() -> HostEvent? {
        guard let event = events.pop() else { return nil }
        switch event {
        case .advertisingReport:
            if let report = reports.pop() { advertisingReport = report }
        case .droppedOutput(.eventQueueFull, _):
            eventLossQueued = false
        default:
            break
        }
        return event
    }

    /// Fills `packet` with the next H4 packet to send to the controller, if flow
    /// control allows one now. Commands go before ACL data.
    public mutating func nextOutgoing(into packet: inout Capacity.HCIPacket) -> Bool {
        if outstandingOpcode == nil, commandCredits > 0, let command = commandQueue.pop() {
            packet = command
            commandCredits &-= 1  // > 0
            let opcode = readOpcode(command)
            outstandingOpcode = opcode
            outstandingParameter = command.count > 4 ? command[4] : 0
            commandDeadline = now + (Host.isOptional(opcode) ? Host.optionalCommandTimeout : configuration.commandTimeout)
            return true
        }
        guard state == .ready || state == .shuttingDown, aclCredits > 0 else { return false }
        if mayOwe { payOwedAnswers() }
        let queued = aclQueue.count
        guard let handle = aclQueue.nextFragment(maxLength: Int(controller.aclDataLength), into: &packet) else {
            return false
        }
        if aclQueue.count < queued { transmitRoomFreed = true }
        aclCredits &-= 1  // > 0
        if let index = connectionIndex(handle) {
            connections[index].inFlight &+= 1  // ≤ the controller's packets
            connections[index].fragmentsSent &+= 1
        }
        return true
    }

    /// Begins an orderly stop: advertising and scanning off, links disconnected,
    /// then HCI Reset. `isStopped` turns true (and .shutdownComplete is emitted)
    /// when the reset completes.
    public mutating func shutdown(now: UInt64) {
        self.now = now
        guard state != .shuttingDown, state != .stopped else { return }
        guard state == .ready else {
            finishShutdown()
            return
        }
        state = .shuttingDown
        shutdownStarted = now
        advertiser.desired = false
        if advertiser.enable.mayBeOn { queueAdvertiseEnable(false) }
        if scanner.enable.enabled { queueScanEnable(false) }
        for i in 0..<linkSlots where connections[i].inUse {
            disconnect(connection: connections[i].handle, reason: HCIStatus.remoteUserTerminated)
        }
        if countConnections() == 0 { queueShutdownReset() }
    }

    /// Sends a harmless command (Read Local Version Information) when nothing is
    /// outstanding, so a controller that stopped answering is noticed by the
    /// command timeout and re-initialised even while the link is idle.
    public mutating func probeController() {
        guard state == .ready, outstandingOpcode == nil, commandQueue.isEmpty else { return }
        queueCommand(Capacity.HCIPacket.command(HCIOpcode.readLocalVersion))
    }

    // MARK: - Internals shared by the extensions

    /// Queues an event for the platform. The ring's last slot is kept for the
    /// notice that events were lost, so the application learns of a loss in
    /// order, once per overflow.
    mutating func push(_ event: HostEvent) {
        guard events.count < events.maxCount - 1 else { return eventLost() }
        events.push(event)
    }

    /// An advertising report travels beside its event, in `reports`.
    mutating func push(_ report: AdvertisingReport) {
        guard events.count < events.maxCount - 1, reports.push(report) else { return eventLost() }
        events.push(.advertisingReport)
    }

    mutating func eventLost() {
        droppedOutput += 1
        counts.droppedOutput[OutputDrop.eventQueueFull.index] &+= 1
        guard !eventLossQueued else { return }
        eventLossQueued = events.push(.droppedOutput(.eventQueueFull, unreported: 0))
    }

    mutating func inputDropped(_ reason: InputDrop) {
        droppedInput += 1
        counts.droppedInput[reason.index] &+= 1
        push(.droppedInput(reason))
    }

    mutating func outputDropped(_ reason: OutputDrop) {
        droppedOutput += 1
        counts.droppedOutput[reason.index] &+= 1
        guard let unreported = outputDropLine.note(now: now) else { return }
        push(.droppedOutput(reason, unreported: unreported))
    }

    /// A link's slot is free again: its server and client state reset in place.
    mutating func release(_ index: Int) {
        connections[index].reset()
        owed[index].removeAll()
        client.links[index].reset()
    }

    @inline(never) func connectionIndex(_ handle: UInt16) -> Int? {
        for i in 0..<linkSlots where connections[i].inUse && connections[i].handle == handle {
            return i
        }
        return nil
    }

    func readOpcode(_ command: Capacity.HCIPacket) -> UInt16 { UInt16(command[1]) | UInt16(command[2]) &<< 8 }

    mutating func queueCommand(_ command: Capacity.HCIPacket) {
        var packet = command
        packet.finishCommand()
        if !commandQueue.push(packet) { outputDropped(.commandQueueFull) }
    }

    /// Queues an L2CAP PDU on a fixed channel.
    @discardableResult
    mutating func sendL2CAP(_ handle: UInt16, channel: UInt16, _ payload: UnsafeRawBufferPointer) -> Bool {
        if aclQueue.enqueue(handle: handle, channel: channel, payload: payload) { return true }
        outputDropped(.transmitQueueFull)
        return false
    }

    mutating func queueShutdownReset() {
        shutdownResetQueued = true
        queueCommand(Capacity.HCIPacket.command(HCIOpcode.reset))
    }

    mutating func finishShutdown(controllerReset: Bool = false) {
        state = .stopped
        outstandingOpcode = nil
        commandQueue.removeAll()
        aclQueue.removeAll()
        push(.shutdownComplete(controllerReset: controllerReset))
    }
}
