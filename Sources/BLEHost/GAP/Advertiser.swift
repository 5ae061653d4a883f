/// The GAP peripheral's advertising (Vol 3 Part C §9.3; Vol 4 Part E §7.8.5–9):
/// what to advertise and whether we want to, while fewer than maxConnections
/// are connected.
struct Advertiser {
    var desired = false
    var data = AdvertisingData()
    var scanResponse = AdvertisingData()
    /// Parameters and data were sent since the last controller reset or change.
    var configured = false
    /// The controller refused to advertise while connected: wait for a disconnection.
    var blockedWhileConnected = false
    var enable = EnableTracker(opcode: HCIOpcode.leSetAdvertiseEnable)

    mutating func resetForRecovery() {
        configured = false
        blockedWhileConnected = false
        enable.reset()
    }
}

extension Host {
    /// Advertises connectably with this data while fewer than maxConnections are
    /// connected; resumes by itself after disconnections and recoveries.
    public mutating func startAdvertising(data: AdvertisingData, scanResponse: AdvertisingData) {
        advertiser.data = data
        advertiser.scanResponse = scanResponse
        advertiser.desired = true
        advertiser.configured = false
        updateAdvertising()
    }

    /// Brings the controller's advertising in line with what is wanted now.
    mutating func updateAdvertising() {
        guard state == .ready else { return }
        let count = countConnections()
        let want = advertiser.desired && count < configuration.maxConnections
            && !(count > 0 && advertiser.blockedWhileConnected)
        if want, !advertiser.configured {
            if advertiser.enable.mayBeOn { queueAdvertiseEnable(false) }
            queueAdvertisingConfiguration()
            advertiser.configured = true
        }
        if want != advertiser.enable.target { queueAdvertiseEnable(want) }
    }

    mutating func queueAdvertisingConfiguration() {
        var parameters = Capacity.HCIPacket.command(HCIOpcode.leSetAdvertisingParameters)
        parameters.appendUInt16(configuration.advertisingIntervalMin)
        parameters.appendUInt16(configuration.advertisingIntervalMax)
        parameters.append(0x00)  // ADV_IND: connectable undirected
        parameters.append(controller.address.type)  // own address type
        parameters.append(0x00)  // peer address type
        parameters.appendZeros(6)  // peer address
        parameters.append(0x07)  // all three channels
        parameters.append(0x00)  // no filter
        queueCommand(parameters)
        queueAdvertisingPayload(HCIOpcode.leSetAdvertisingData, advertiser.data)
        queueAdvertisingPayload(HCIOpcode.leSetScanResponseData, advertiser.scanResponse)
    }

    mutating func queueAdvertisingPayload(_ opcode: UInt16, _ data: AdvertisingData) {
        var command = Capacity.HCIPacket.command(opcode)
        command.append(UInt8(data.payload.count))
        command.append(contentsOf: data.payload)
        command.appendZeros(AdvertisingData.maxLength - data.payload.count)
        queueCommand(command)
    }

    mutating func queueAdvertiseEnable(_ enable: Bool) {
        queueCommand(advertiser.enable.command(enable))
    }

    mutating func advertiseEnableCompleted(_ status: UInt8, _ enable: Bool) {
        switch advertiser.enable.answered(enable, status: status) {
        case .changed(let enabled):
            push(.advertising(enabled: enabled))
        case .unchanged:
            break
        case .failed(HCIStatus.commandDisallowed) where enable && countConnections() > 0:
            // Many controllers cannot advertise connectably while connected: wait
            // for the next disconnection instead of retrying.
            advertiser.blockedWhileConnected = true
            push(.advertisingWhileConnectedUnsupported)
        case .failed(let status):
            push(.commandFailed(opcode: HCIOpcode.leSetAdvertiseEnable, status: status))
        }
        if state == .ready { updateAdvertising() }
    }
}
