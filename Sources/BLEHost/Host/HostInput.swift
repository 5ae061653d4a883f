/// Incoming HCI packets: events (Core Vol 4 Part E §7.7) and ACL data (§5.4.2).
extension Host {
    /// Handles one HCI packet from the controller (type = H4 indicator, packet
    /// without it). Malformed packets are dropped and reported as .droppedInput.
    /// `delegate` serves our dynamic attributes and is given the notifications
    /// and indications of the peer's server.
    public mutating func handlePacket<D: GATTDelegate & ~Copyable>(
        type: UInt8, _ packet: UnsafeRawBufferPointer, now: UInt64, delegate: inout D
    ) {
        self.now = now
        switch type {
        case H4PacketType.event:
            handleEvent(packet)
            if linkAppeared { replayEarlyACL(delegate: &delegate) }
        case H4PacketType.acl: handleACL(packet, delegate: &delegate)
        default: break  // SCO/ISO: not used on LE fixed channels
        }
    }

    /// After a connection completed: hand over held ACL of links that now
    /// exist; what still has no link was not early but wrong, and is dropped.
    mutating func replayEarlyACL<D: GATTDelegate & ~Copyable>(
        delegate: inout D
    ) {
        linkAppeared = false
        while let held = earlyACL.pop() {
            let handle = UInt16(held[0]) | UInt16(held[1] & 0x0F) &<< 8
            if connectionIndex(handle) != nil {
                held.withBytes { handleACL($0, delegate: &delegate) }
            } else {
                inputDropped(.aclUnknownHandle)
            }
        }
    }

    mutating func handleEvent(_ packet: UnsafeRawBufferPointer) {
        guard packet.count >= 2, Int(packet[1]) == packet.count - 2 else { return inputDropped(.hciEvent) }
        let code = packet[0]
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: packet[2...]))
        switch code {
        case HCIEventCode.commandComplete:
            guard reader.has(3) else { return inputDropped(.hciEvent) }
            let credits = Int(reader.u8())
            let opcode = reader.u16()
            // Return parameters start with the status for every command we send.
            let status = reader.has(1) ? reader.bytes[reader.offset] : 0
            let params = reader.has(1) ? UnsafeRawBufferPointer(rebasing: reader.bytes[(reader.offset + 1)...]) : reader.rest()
            commandFinished(opcode, credits: credits, status: status, params: params, isStatus: false)
        case HCIEventCode.commandStatus:
            guard reader.has(4) else { return inputDropped(.hciEvent) }
            let status = reader.u8()
            let credits = Int(reader.u8())
            let opcode = reader.u16()
            commandFinished(opcode, credits: credits, status: status, params: reader.rest(), isStatus: true)
        case HCIEventCode.disconnectionComplete:
            guard reader.has(4) else { return inputDropped(.hciEvent) }
            let status = reader.u8(), handle = reader.u16() & 0x0FFF, reason = reader.u8()
            if status == HCIStatus.success { connectionClosed(handle, reason: reason) }
        case HCIEventCode.numberOfCompletedPackets:
            guard reader.has(1) else { return inputDropped(.hciEvent) }
            let handles = Int(reader.u8())
            guard reader.has(handles * 4) else { return inputDropped(.hciEvent) }
            for _ in 0..<handles {
                let handle = reader.u16() & 0x0FFF, completed = Int(reader.u16())
                if let index = connectionIndex(handle) {
                    let credited = min(completed, connections[index].inFlight)
                    // credited ≤ inFlight ≤ the controller's packets: no overflow.
                    connections[index].inFlight &-= credited
                    connections[index].fragmentsCompleted &+= credited
                    aclCredits = min(aclCredits &+ credited, Int(controller.aclPackets))
                }
            }
        case HCIEventCode.hardwareError:
            guard state != .stopped else { return }
            // Reset and brought up again, on every board: only a stop in progress ends instead.
            push(.hardwareError(code: reader.has(1) ? reader.u8() : nil, resetting: state != .shuttingDown))
            if state == .shuttingDown { return finishShutdown() }
            reinitialize(after: .hardwareError)
        case HCIEventCode.dataBufferOverflow:
            push(.dataBufferOverflow)
        case HCIEventCode.leMeta:
            guard reader.has(1) else { return inputDropped(.hciEvent) }
            handleLEMeta(reader.u8(), &reader)
        default:
            break  // events we did not ask for (Bumble ignores masks): ignore
        }
    }

    mutating func commandFinished(
        _ opcode: UInt16, credits: Int, status: UInt8, params: UnsafeRawBufferPointer, isStatus: Bool
    ) {
        commandCredits = credits
        // Opcode 0x0000 only reports credits (Vol 4 Part E §7.7.14).
        guard opcode != 0 else { return }
        let parameter = outstandingParameter
        if outstandingOpcode == opcode { outstandingOpcode = nil }
        switch state {
        case .initializing:
            if isStatus {
                if opcode == initStep.opcode { initStepCompleted(opcode, status: status, params) }
            } else {
                initStepCompleted(opcode, status: status, params)
            }
        case .shuttingDown:
            if opcode == HCIOpcode.reset, shutdownResetQueued { finishShutdown(controllerReset: true) }
        case .ready:
            switch opcode {
            case HCIOpcode.leSetAdvertiseEnable:
                advertiseEnableCompleted(status, parameter == 1)
            case HCIOpcode.leSetScanEnable:
                scanEnableCompleted(status, parameter == 1)
            case HCIOpcode.leCreateConnection:
                if status != HCIStatus.success { createConnectionFailed(status) }
            case HCIOpcode.leCreateConnectionCancel:
                break  // the Connection Complete (0x02 Unknown Connection / 0x3E) tells the outcome
            case HCIOpcode.disconnect:
                // Already gone (0x02 Unknown Connection Identifier): nothing to wait for.
                if status != HCIStatus.success { push(.commandFailed(opcode: opcode, status: status)) }
            case HCIOpcode.leConnectionUpdate, HCIOpcode.leReadRemoteFeatures, HCIOpcode.leSetDataLength,
                 HCIOpcode.leSetPHY:
                if status != HCIStatus.success { tuningCommandFailed(opcode, status: status, handleLow: parameter) }
            default:
                if status != HCIStatus.success { push(.commandFailed(opcode: opcode, status: status)) }
            }
        case .off, .stopped:
            break
        }
    }

    mutating func handleLEMeta(_ subevent: UInt8, _ reader: inout ByteReader) {
        switch subevent {
        case LESubevent.connectionComplete, LESubevent.enhancedConnectionComplete:
            // status, handle, role, peer type, peer address, [local RPA, peer RPA], interval, latency, timeout, SCA
            let enhanced = subevent == LESubevent.enhancedConnectionComplete
            guard reader.has(enhanced ? 30 : 18) else { return inputDropped(.hciEvent) }
            let status = reader.u8(), handle = reader.u16() & 0x0FFF, role = reader.u8()
            let peerType = reader.u8() & 0x01
            let peer = BDAddress(reader: &reader, type: peerType)
            if enhanced { _ = reader.take(12) }
            let interval = reader.u16()
            connectionCompleted(status: status, handle: handle, isCentral: role == 0, peer: peer, interval: interval)
        case LESubevent.connectionUpdateComplete:
            guard reader.has(9) else { return inputDropped(.hciEvent) }
            let status = reader.u8(), handle = reader.u16() & 0x0FFF
            let interval = reader.u16(), latency = reader.u16(), timeout = reader.u16()
            guard status == 0 else { return linkLayerUpdateFailed(handle, status: status) }
            guard let index = connectionIndex(handle) else { return unknownConnection(handle, subevent) }
            if connections[index].tuning == .askingLinkLayer { connections[index].tuning = .done }
            push(.connectionUpdated(connection: handle, interval: interval, latency: latency, timeout: timeout))
        case LESubevent.readRemoteFeaturesComplete:
            guard reader.has(11) else { return inputDropped(.hciEvent) }
            let status = reader.u8(), handle = reader.u16() & 0x0FFF
            var features: UInt64 = 0
            for i in 0..<8 { features |= wide(reader.u8()) &<< wide(8 * i) }
            remoteFeaturesKnown(handle, status == 0 ? features : 0)
        case LESubevent.dataLengthChange:
            guard reader.has(10) else { return inputDropped(.hciEvent) }
            let handle = reader.u16() & 0x0FFF, tx = reader.u16()
            _ = reader.u16()
            let rx = reader.u16()
            guard connectionIndex(handle) != nil else { return unknownConnection(handle, subevent) }
            push(.dataLengthChanged(connection: handle, txOctets: tx, rxOctets: rx))
        case LESubevent.phyUpdateComplete:
            guard reader.has(5) else { return inputDropped(.hciEvent) }
            let status = reader.u8(), handle = reader.u16() & 0x0FFF, tx = reader.u8(), rx = reader.u8()
            guard status == 0 else { return }
            guard connectionIndex(handle) != nil else { return unknownConnection(handle, subevent) }
            push(.phyUpdated(connection: handle, tx: tx, rx: rx))
        case LESubevent.longTermKeyRequest:
            // No bonding, no keys: LTK Negative Reply (Vol 4 Part E §7.8.26).
            guard reader.has(12) else { return inputDropped(.hciEvent) }
            var command = Capacity.HCIPacket.command(HCIOpcode.leLongTermKeyNegativeReply)
            command.appendUInt16(reader.u16() & 0x0FFF)
            queueCommand(command)
        case LESubevent.remoteConnectionParameterRequest:
            guard reader.has(10) else { return inputDropped(.hciEvent) }
            let handle = reader.u16() & 0x0FFF
            let parameters = ConnectionParameters(
                intervalMin: reader.u16(), intervalMax: reader.u16(), latency: reader.u16(), timeout: reader.u16())
            if parameters.isValid {
                queueConnectionParameters(HCIOpcode.leRemoteConnectionParameterReply, handle, parameters)
            } else {
                var command = Capacity.HCIPacket.command(HCIOpcode.leRemoteConnectionParameterNegativeReply)
                command.appendUInt16(handle)
                command.append(HCIStatus.unacceptableConnectionParameters)
                queueCommand(command)
            }
        case LESubevent.advertisingReport:
            handleAdvertisingReports(&reader, extended: false)
        case LESubevent.extendedAdvertisingReport:
            handleAdvertisingReports(&reader, extended: true)
        default:
            break
        }
    }

    /// An LE event about a link for a handle that has none (a stale or noisy
    /// controller): dropped and counted with the ACL of unknown handles, its
    /// line naming the handle as unknown, not as a connection.
    mutating func unknownConnection(_ handle: UInt16, _ subevent: UInt8) {
        droppedInput += 1
        counts.droppedInput[InputDrop.aclUnknownHandle.index] &+= 1
        push(.unknownConnection(connection: handle, subevent: subevent))
    }

    /// LE Connection Update and LE Remote Connection Parameter Request Reply share
    /// their parameters: handle, interval min/max, latency, timeout, CE lengths.
    mutating func queueConnectionParameters(_ opcode: UInt16, _ handle: UInt16, _ parameters: ConnectionParameters) {
        var command = Capacity.HCIPacket.command(opcode)
        command.appendUInt16(handle)
        command.appendUInt16(parameters.intervalMin)
        command.appendUInt16(parameters.intervalMax)
        command.appendUInt16(parameters.latency)
        command.appendUInt16(parameters.timeout)
        command.appendZeros(4)  // minimum/maximum CE length
        queueCommand(command)
    }

    mutating func connectionCompleted(status: UInt8, handle: UInt16, isCentral: Bool, peer: BDAddress, interval: UInt16) {
        if configuration.role == .central || isCentral {
            let report = centralConnectionCompleted(status: status)
            guard status == HCIStatus.success else {
                if report { push(.connectionFailed(status: status)) }
                return
            }
        }
        // A failed completion as peripheral (e.g. directed advertising timeout) changes nothing.
        guard status == HCIStatus.success else { return }
        // The controller stopped advertising when this link was made (Vol 6 Part B §4.4.2).
        if !isCentral, advertiser.enable.stoppedByController() {
            push(.advertising(enabled: false))
        }
        var slot: Int? = nil
        for i in 0..<linkSlots where !connections[i].inUse {
            slot = i
            break
        }
        guard let index = slot, countConnections() < configuration.maxConnections, state == .ready else {
            // Over the limit (a race with advertising): refuse politely.
            push(.connectionRejected(connection: handle, peer: peer))
            var command = Capacity.HCIPacket.command(HCIOpcode.disconnect)
            command.appendUInt16(handle)
            command.append(HCIStatus.remoteLowResources)
            queueCommand(command)
            return
        }
        connections[index].inUse = true
        connections[index].handle = handle
        connections[index].isCentral = isCentral
        connections[index].peer = peer
        connections[index].lastRequest = now
        linkAppeared = true
        counts.connections &+= 1
        push(.connected(connection: handle, peer: peer, isCentral: isCentral, interval: interval))
        // Advertising first: the kiosk is found again while this link is tuned.
        updateAdvertising()
        beginTuning(index)
    }

    mutating func connectionClosed(_ handle: UInt16, reason: UInt8) {
        guard let index = connectionIndex(handle) else { return }
        // Packets the controller had not sent are flushed with the link (Vol 4 Part E §4.3).
        aclCredits = min(aclCredits + connections[index].inFlight, Int(controller.aclPackets))
        aclQueue.remove(handle: handle)
        reportHeldLines(index)
        release(index)
        transmitRoomFreed = true
        push(.disconnected(connection: handle, reason: reason))
        if state == .shuttingDown {
            if countConnections() == 0, !shutdownResetQueued { queueShutdownReset() }
            return
        }
        advertiser.blockedWhileConnected = false
        updateAdvertising()
    }
}
