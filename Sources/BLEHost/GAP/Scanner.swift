/// The GAP central's scanning and connection establishment (Core Vol 3 Part C
/// §9.3; Vol 4 Part E §7.8.10–13).
struct Scanner {
    var desired = false
    var enable = EnableTracker(opcode: HCIOpcode.leSetScanEnable)
    var connecting = false
    /// Create Connection Cancel was sent; its failed Connection Complete is expected.
    var cancelling = false
    /// When a Create Connection is given up.
    var deadline: UInt64? = nil

    /// After a controller reset: nothing on, nothing pending; still wanted if it was.
    mutating func resetForRecovery() {
        enable.reset()
        connecting = false
        cancelling = false
        deadline = nil
    }
}

extension Host {
    /// Scan interval 60 ms, window 30 ms (0.625 ms units): finds 100 ms advertisers
    /// within a few intervals while leaving the radio half free for Wi-Fi coexistence.
    static let scanInterval: UInt16 = 0x0060
    static let scanWindow: UInt16 = 0x0030

    public var isScanning: Bool { scanner.enable.enabled }
    public var isConnecting: Bool { scanner.connecting }

    /// Active scanning without controller duplicate filtering (LE Set Scan
    /// Enable, Core Vol 4 Part E §7.8.11): with filtering on, a controller
    /// reports each advertiser once per scan, so its first RSSI sample would
    /// decide for the whole scan. Real radios (and RootCanal) report a
    /// different RSSI every time; the central judges its RSSI window on every
    /// report instead, in a fixed-size table.
    public mutating func startScanning() {
        scanner.desired = true
        guard state == .ready, !scanner.connecting else { return }
        if !scanner.enable.target {
            var parameters = Capacity.HCIPacket.command(HCIOpcode.leSetScanParameters)
            parameters.append(0x01)  // active: ask for scan responses
            parameters.appendUInt16(Host.scanInterval)
            parameters.appendUInt16(Host.scanWindow)
            parameters.append(controller.address.type)
            parameters.append(0x00)  // accept all advertisers
            queueCommand(parameters)
            queueScanEnable(true)
        }
    }

    public mutating func stopScanning() {
        scanner.desired = false
        if scanner.enable.target { queueScanEnable(false) }
    }

    /// LE Create Connection to `peer`; cancelled when `timeout` ms pass without a
    /// connection (then .connectionFailed). Scanning stops first.
    @discardableResult
    public mutating func connect(to peer: BDAddress, timeout: UInt64) -> Bool {
        guard state == .ready, !scanner.connecting, countConnections() < configuration.maxConnections else { return false }
        if scanner.enable.target { queueScanEnable(false) }
        scanner.desired = false
        scanner.connecting = true
        scanner.cancelling = false
        scanner.deadline = now + timeout
        var command = Capacity.HCIPacket.command(HCIOpcode.leCreateConnection)
        command.appendUInt16(Host.scanInterval)
        command.appendUInt16(Host.scanInterval)
        command.append(0x00)  // no filter accept list: this peer
        command.append(peer.type)
        peer.write(to: &command)
        command.append(controller.address.type)
        command.appendUInt16(0x0018)  // interval min 30 ms
        command.appendUInt16(0x0028)  // interval max 50 ms
        command.appendUInt16(0)  // latency
        command.appendUInt16(400)  // supervision timeout 4 s
        command.appendZeros(4)  // CE lengths
        queueCommand(command)
        return true
    }

    mutating func queueScanEnable(_ enable: Bool) {
        var command = scanner.enable.command(enable)
        command.append(0x00)  // no duplicate filtering: every report counts (see startScanning)
        queueCommand(command)
    }

    mutating func scanEnableCompleted(_ status: UInt8, _ enable: Bool) {
        switch scanner.enable.answered(enable, status: status) {
        case .changed(let enabled): push(.scanning(enabled: enabled))
        case .unchanged: break
        case .failed(let status): push(.commandFailed(opcode: HCIOpcode.leSetScanEnable, status: status))
        }
    }

    mutating func createConnectionFailed(_ status: UInt8) {
        scanner.connecting = false
        scanner.deadline = nil
        push(.connectionFailed(status: status))
    }

    mutating func tickCentral() {
        if scanner.connecting, let deadline = scanner.deadline, now >= deadline { cancelConnecting() }
        tickClients()
    }

    /// Gives up the LE Create Connection in progress, as its timeout does
    /// (then .connectionFailed): the application's own deadline came first.
    public mutating func cancelConnecting() {
        guard scanner.connecting else { return }
        // Cancel (Vol 4 Part E §7.8.13). A real controller answers with a
        // Connection Complete (0x02); Bumble's may not, so we do not wait for it.
        scanner.connecting = false
        scanner.cancelling = true
        scanner.deadline = nil
        queueCommand(Capacity.HCIPacket.command(HCIOpcode.leCreateConnectionCancel))
        push(.connectionFailed(status: HCIStatus.connectionTimeout))
    }

    mutating func centralReady() {
        if scanner.desired { startScanning() }
    }

    /// Returns false when the failed completion was the expected echo of a cancel.
    mutating func centralConnectionCompleted(status: UInt8) -> Bool {
        let wasCancelling = scanner.cancelling
        scanner.connecting = false
        scanner.cancelling = false
        scanner.deadline = nil
        return !(status != HCIStatus.success && wasCancelling)
    }

    /// LE Advertising Report (0x02) and LE Extended Advertising Report (0x0D),
    /// Vol 4 Part E §7.7.65.2 and §7.7.65.13. Reports are parsed one by one; a
    /// report running past the event ends the parsing (what came before counts).
    mutating func handleAdvertisingReports(_ reader: inout ByteReader, extended: Bool) {
        guard reader.has(1) else { return inputDropped(.hciEvent) }
        let count = Int(reader.u8())
        for _ in 0..<count {
            var connectable = false, scanResponse = false
            var address = BDAddress.zero
            var rssi: Int8 = 127
            var data = Capacity.AdvertisingPayload()
            if extended {
                guard reader.has(24) else { return inputDropped(.hciEvent) }
                let type = reader.u16()
                let addressType = reader.u8()
                address = BDAddress(reader: &reader, type: addressType & 0x01)
                _ = reader.take(4)  // PHYs, SID, TX power
                rssi = Int8(bitPattern: reader.u8())
                _ = reader.take(9)  // periodic interval, direct address type and address
                let length = Int(reader.u8())
                guard reader.has(length) else { return inputDropped(.hciEvent) }
                let payload = reader.take(length)
                data.append(UnsafeRawBufferPointer(rebasing: payload[0..<min(length, 31)]))
                connectable = type & 0x0001 != 0
                scanResponse = type & 0x0008 != 0
            } else {
                guard reader.has(9) else { return inputDropped(.hciEvent) }
                let type = reader.u8()
                let addressType = reader.u8()
                address = BDAddress(reader: &reader, type: addressType & 0x01)
                let length = Int(reader.u8())
                guard length <= 31, reader.has(length + 1) else { return inputDropped(.hciEvent) }
                data.append(reader.take(length))
                rssi = Int8(bitPattern: reader.u8())
                connectable = type == 0x00 || type == 0x01
                scanResponse = type == 0x04
            }
            push(AdvertisingReport(
                address: address, rssi: rssi, connectable: connectable, isScanResponse: scanResponse, data: data))
        }
    }
}
