extension HostEvent {
    /// The level its line is logged at (GATT client steps and advertising
    /// reports are trace: a scan produces hundreds).
    public var severity: LogSeverity {
        switch self {
        case .controllerTimeout, .hardwareError: .error
        case .commandFailed, .connectionFailed, .connectionRejected, .dataBufferOverflow, .droppedOutput,
             .requestsDropped: .warning
        case .ready, .advertising, .advertisingWhileConnectedUnsupported, .connected, .disconnected, .mtuExchanged,
             .idleDisconnect, .pairingRefused, .shutdownComplete, .connectionUpdated, .connectionParametersRefused,
             .dataLengthChanged, .phyUpdated: .info
        case .scanning, .subscriptionChanged, .droppedInput, .unknownConnection, .linkOptionRefused: .debug
        case .advertisingReport, .gattClient: .trace
        }
    }

    /// The one line that says what happened (every board's log uses it); the
    /// controller's details and an advertising report are read from `host`.
    /// Out of line: cold (only when a line is logged), it was inlined into the
    /// loop's event pass with every piece of its text.
    @inline(never)
    public func describe<S: LogSink & ~Copyable>(into line: inout S, host: borrowing Host) {
        switch self {
        case .ready:
            let info = host.controller
            line.text("controller ready: address ")
            line.address(info.address)
            line.text(info.address.type == 0 ? " (public), " : " (random), ")
            line.coreVersion(info.hciVersion)
            line.text(", manufacturer ")
            line.companyName(info.manufacturer)
            line.text(", ACL ")
            line.decimal(Int(info.aclDataLength))
            line.text(" bytes x ")
            line.decimal(Int(info.aclPackets))
        case .commandFailed(let opcode, let status):
            line.text("HCI command ")
            line.commandName(opcode)
            line.text(" failed: ")
            line.statusName(status)
        case .advertising(let enabled):
            line.text(enabled ? "advertising" : "advertising stopped")
        case .advertisingWhileConnectedUnsupported:
            line.text("controller cannot advertise while connected; advertising resumes after the next disconnection")
        case .scanning(let enabled):
            line.text(enabled ? "scanning" : "scanning stopped")
        case .connected(let handle, let peer, let isCentral, let interval):
            line.text("connected: handle ")
            line.hex(handle)
            line.text(isCentral ? " to " : " from ")
            line.address(peer)
            line.text(peer.type == 0 ? " (public), interval " : " (random), interval ")
            line.interval(interval)
            line.text(" ms")
        case .connectionFailed(let status):
            line.text("connection failed: ")
            line.statusName(status)
        case .connectionRejected(let handle, let peer):
            line.text("connection ")
            line.hex(handle)
            line.text(" from ")
            line.address(peer)
            line.text(" refused: at --max-centrals")
        case .disconnected(let handle, let reason):
            line.text("disconnected: handle ")
            line.hex(handle)
            if let reason {
                line.text(", ")
                line.statusName(reason)
            } else {
                line.text(" (link dropped: the controller is being reset)")
            }
        case .connectionUpdated(let handle, let interval, let latency, let timeout):
            line.text("connection ")
            line.hex(handle)
            line.text(" parameters: interval ")
            line.interval(interval)
            line.text(" ms, latency ")
            line.decimal(Int(latency))
            line.text(", timeout ")
            line.decimal(Int(timeout) * 10)
            line.text(" ms")
        case .connectionParametersRefused(let handle):
            line.text("connection ")
            line.hex(handle)
            line.text(": the central refused the connection parameters asked for; its own are kept")
        case .dataLengthChanged(let handle, let tx, let rx):
            line.text("connection ")
            line.hex(handle)
            line.text(" data length: ")
            line.decimal(Int(tx))
            line.text(" bytes out, ")
            line.decimal(Int(rx))
            line.text(" in")
        case .phyUpdated(let handle, let tx, let rx):
            line.text("connection ")
            line.hex(handle)
            line.text(" PHY: ")
            line.phy(tx)
            line.text(" out, ")
            line.phy(rx)
            line.text(" in")
        case .linkOptionRefused(let opcode, let status):
            if let status {
                line.text("controller refused ")
                line.commandName(opcode)
                line.text(" (")
                line.statusName(status)
                line.text("); the link keeps what it has")
            } else {
                line.text("controller left ")
                line.commandName(opcode)
                line.text(" unanswered (optional: not sent again; the link keeps what it has)")
            }
        case .mtuExchanged(let handle, let mtu):
            line.text("MTU ")
            line.decimal(Int(mtu))
            line.text(" on handle ")
            line.hex(handle)
        case .subscriptionChanged(let handle, let valueHandle, let value):
            switch value & 0x0003 {
            case 0x0001: line.text("subscribed to notifications")
            case 0x0002: line.text("subscribed to indications")
            case 0x0003: line.text("subscribed to notifications and indications")
            default: line.text("unsubscribed (notifications and indications off)")
            }
            line.text(": handle ")
            line.hex(handle)
            line.text(", attribute ")
            line.hex(valueHandle)
        case .idleDisconnect(let handle, let peer):
            line.text("disconnecting idle central ")
            line.address(peer)
            line.text(" on handle ")
            line.hex(handle)
            line.text(": nothing asked (no subscription or question) within --idle-timeout")
        case .pairingRefused(let handle, let unreported):
            line.text("pairing refused (not supported) on handle ")
            line.hex(handle)
            line.moreSince(unreported, "SMP packet(s) from this peer refused")
        case .controllerTimeout(let opcode, let resetting):
            line.text("controller did not answer HCI command ")
            line.commandName(opcode)
            if resetting { line.text("; resetting it") }
        case .hardwareError(let code, let resetting):
            if let code {
                line.text("controller hardware error 0x")
                line.byte(code)
            } else {
                line.text("controller hardware error (the event carries no code)")
            }
            if resetting { line.text("; resetting it") }
        case .dataBufferOverflow:
            line.text("controller reported a data buffer overflow")
        case .droppedInput(let reason):
            line.text("dropped input: ")
            switch reason {
            case .hciEvent: line.text("malformed HCI event")
            case .aclUnknownHandle: line.text("ACL for an unknown handle")
            case .aclMalformed: line.text("malformed ACL")
            case .l2capUnknownChannel: line.text("unknown L2CAP channel")
            case .attMalformed: line.text("malformed ATT PDU")
            }
        case .unknownConnection(let handle, let subevent):
            line.text("dropped input: LE event 0x")
            line.byte(subevent)
            line.text(" for unknown connection ")
            line.hex(handle)
        case .droppedOutput(let reason, let unreported):
            line.text("dropped output: ")
            switch reason {
            case .commandQueueFull: line.text("HCI command queue full")
            case .transmitQueueFull: line.text("transmit queue full")
            case .eventQueueFull: line.text("event queue full (events lost)")
            }
            line.moreSince(unreported, "drop(s)")
        case .requestsDropped(let handle, let reason, let unreported):
            switch reason {
            case .attPipelined:
                line.text("dropped an ATT request on handle ")
                line.hex(handle)
                line.text(": the peer did not wait for the answer to its previous one (one at a time)")
            case .signalingPipelined:
                line.text("dropped an L2CAP signalling request on handle ")
                line.hex(handle)
                line.text(": the answer to the previous one still waits")
            }
            line.moreSince(unreported, "request(s) from this peer dropped")
        case .advertisingReport:
            let report = host.advertisingReport
            line.text("advertising report from ")
            line.address(report.address)
            line.text(" RSSI ")
            line.decimal(Int(report.rssi))
        case .gattClient:
            line.text("GATT client event")
        case .shutdownComplete(let controllerReset):
            // Said only when the controller confirmed the Reset: one that never
            // answered was not reset.
            line.text(controllerReset ? "controller reset; stopped" : "stopped (no controller reset confirmed)")
        }
    }
}
