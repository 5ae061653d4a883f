/// What the platform and the application do with a link: end it, send our
/// server's values, ask its MTU and its subscriptions.
extension Host {
    public mutating func disconnect(connection: UInt16, reason: UInt8 = HCIStatus.remoteUserTerminated) {
        guard let index = connectionIndex(connection), !connections[index].disconnecting else { return }
        connections[index].disconnecting = true
        var command = Capacity.HCIPacket.command(HCIOpcode.disconnect)
        command.appendUInt16(connection)
        command.append(reason)
        queueCommand(command)
    }

    /// Sends a notification when the peer enabled them in the CCCD. The value is
    /// cut to ATT_MTU - 3 (Vol 3 Part F §3.4.7.1). False when not subscribed or
    /// when the link has no room now (its share of the transmit queue is used,
    /// or answers it is owed go first): nothing is dropped, the caller tries
    /// again after `transmitRoomFreed`.
    @discardableResult
    public mutating func notify(connection handle: UInt16, attribute: UInt16, value: UnsafeRawBufferPointer) -> Bool {
        sendHandleValue(handle, attribute, value, opcode: ATTOpcode.handleValueNotification, bit: 0x0001)
    }

    /// Sends an indication when enabled and none is awaiting its confirmation.
    @discardableResult
    public mutating func indicate(connection handle: UInt16, attribute: UInt16, value: UnsafeRawBufferPointer) -> Bool {
        sendHandleValue(handle, attribute, value, opcode: ATTOpcode.handleValueIndication, bit: 0x0002)
    }

    /// The link's `fragmentsCompleted` once everything queued for it now (the
    /// PDU just queued last) has been completed by the controller; nil for no link.
    /// Fragments in order per link (Vol 4 Part E §4.1.1), so reaching it means
    /// that PDU went over the air.
    public func completionMark(connection handle: UInt16) -> Int? {
        guard let index = connectionIndex(handle) else { return nil }
        let waiting = aclQueue.fragments(handle: handle, maxLength: Int(controller.aclDataLength))
        return connections[index].fragmentsSent &+ waiting
    }

    /// ACL packets of a link the controller reported completed; nil for no link.
    public func completedFragments(connection handle: UInt16) -> Int? {
        guard let index = connectionIndex(handle) else { return nil }
        return connections[index].fragmentsCompleted
    }

    /// The CCCD value a connection wrote for a characteristic value handle (0 if none).
    public func subscription(connection: UInt16, attribute: UInt16) -> UInt16 {
        guard let index = connectionIndex(connection),
              let cccd = server.database.cccdIndex(forValue: attribute) else { return 0 }
        return connections[index].bearer.cccd[cccd]
    }

    /// The ATT MTU of a connection.
    public func mtu(connection: UInt16) -> UInt16 {
        guard let index = connectionIndex(connection) else { return ATT.defaultMTU }
        return connections[index].bearer.mtu
    }

    mutating func sendHandleValue(
        _ handle: UInt16, _ attribute: UInt16, _ value: UnsafeRawBufferPointer, opcode: UInt8, bit: UInt16
    ) -> Bool {
        guard let index = connectionIndex(handle), !connections[index].disconnecting,
              let cccd = server.database.cccdIndex(forValue: attribute),
              connections[index].bearer.cccd[cccd] & bit != 0 else { return false }
        let isIndication = opcode == ATTOpcode.handleValueIndication
        if isIndication, connections[index].bearer.indicationPending { return false }
        // Written straight into the transmit slot; the value is cut to ATT_MTU - 3.
        guard canSend(index), let slot = aclQueue.reserve(handle: handle, channel: L2CAPChannel.att) else {
            return false
        }
        let length = min(value.count, Int(connections[index].bearer.mtu) - 3)
        aclQueue.pdus[slot].append(opcode)
        aclQueue.pdus[slot].appendUInt16(attribute)
        aclQueue.pdus[slot].append(UnsafeRawBufferPointer(rebasing: value[0..<length]))
        aclQueue.commit()
        if isIndication { connections[index].bearer.indicationPending = true }
        return true
    }
}
