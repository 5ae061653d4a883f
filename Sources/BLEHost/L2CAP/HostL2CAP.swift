/// ACL from the controller to L2CAP: each link's reassembly, then each channel
/// (ATT, the LE signaling channel, SMP) to its handler (Core Vol 3 Part A).
extension Host {
    mutating func handleACL<D: GATTDelegate & ~Copyable>(
        _ packet: UnsafeRawBufferPointer, delegate: inout D
    ) {
        guard packet.count >= 4, Int(readUInt16(packet, 2)) == packet.count - 4 else { return inputDropped(.aclMalformed) }
        let header = readUInt16(packet, 0)
        let handle = header & 0x0FFF
        let boundary = (header &>> 12) & 0x3
        guard let index = connectionIndex(handle) else {
            // Possibly early (see earlyACL): keep the newest two, drop what they push out.
            if earlyACL.isFull {
                _ = earlyACL.pop()
                inputDropped(.aclUnknownHandle)
            }
            if packet.count > Capacity.HCIPacket.capacityCount || !earlyACL.push(FixedBytes(packet)) { inputDropped(.aclUnknownHandle) }
            return
        }
        let payload = UnsafeRawBufferPointer(rebasing: packet[4...])
        // 0b10 (and 0b00) start a PDU, 0b01 continues one; 0b11 is reserved.
        guard boundary != 0b11 else { return inputDropped(.aclMalformed) }
        let before = connections[index].reassembler.dropped
        let result = connections[index].reassembler.push(payload, isStart: boundary != 0b01)
        if connections[index].reassembler.dropped != before { inputDropped(.aclMalformed) }
        switch result {
        case .needMore:
            break
        case .completeInPlace(let channel):
            handleL2CAP(index, channel, UnsafeRawBufferPointer(rebasing: payload[4...]), delegate: &delegate)
        case .completeInBuffer(let channel):
            // The handlers reach into the connection table, so the reassembled PDU
            // (only ever a fragmented one) is copied out of it once, into a
            // buffer as large as the reassembler's (4 + ATT_MTU: 521 bytes on
            // Linux, more than an outgoing packet holds).
            var pdu = Capacity.L2CAPPDU()
            _ = connections[index].reassembler.withPayload { pdu.append($0) }
            pdu.withBytes { handleL2CAP(index, channel, $0, delegate: &delegate) }
        }
    }

    mutating func handleL2CAP<D: GATTDelegate & ~Copyable>(
        _ index: Int, _ channel: UInt16, _ pdu: UnsafeRawBufferPointer, delegate: inout D
    ) {
        let handle = connections[index].handle
        switch channel {
        case L2CAPChannel.att:
            handleATT(index, pdu, delegate: &delegate)
        case L2CAPChannel.leSignaling:
            // A response is owed nothing and takes no room (Vol 3 Part A §4.1):
            // never dropped as a pipelined request, never rejected.
            if let code = pdu.first, L2CAPSignaling.isResponse(code) {
                return signalNoted(index, L2CAPSignaling.responseReceived(pdu))
            }
            // Sent in a transmit slot when there is room, else owed; one
            // signalling request at a time (Vol 3 Part A §4): a second one
            // while an answer is owed is dropped.
            if !owed[index].isEmpty { payOwed(index) }
            let slot = canSend(index) ? aclQueue.reserve(handle: handle, channel: L2CAPChannel.leSignaling) : nil
            guard slot != nil || owed[index].signaling.isEmpty else { return requestDropped(index, .signalingPipelined) }
            // Built in one place (the answer is at most 14 bytes), then copied
            // where it goes: one copy of the handler, not one per destination.
            var answer = Capacity.SignalingAnswer()
            let note = L2CAPSignaling.receive(pdu, isCentral: connections[index].isCentral, response: &answer)
            if let slot {
                if !answer.isEmpty {
                    answer.withBytes { _ = aclQueue.pdus[slot].append($0) }
                    aclQueue.commit()
                }
            } else {
                owed[index].signaling.contents = answer
                owe()
            }
            signalNoted(index, note)
        case L2CAPChannel.smp:
            // Every SMP command gets Pairing Failed; owed ones collapse into one.
            if !owed[index].isEmpty { payOwed(index) }
            guard let code = pdu.first, code != SMP.pairingFailed else { return }
            if canSend(index), let slot = aclQueue.reserve(handle: handle, channel: L2CAPChannel.smp) {
                SMP.receive(pdu, response: &aclQueue.pdus[slot].contents)
                aclQueue.commit()
            } else {
                owed[index].smp = true
                owe()
            }
            pairingRefused(index, handle)
        default:
            inputDropped(.l2capUnknownChannel)
        }
    }

    /// What a signalling PDU asks of the host beyond its response.
    mutating func signalNoted(_ index: Int, _ note: L2CAPSignalNote) {
        switch note {
        case .updateConnection(let parameters):
            queueConnectionParameters(HCIOpcode.leConnectionUpdate, connections[index].handle, parameters)
        case .updateAnswered(let identifier, let accepted):
            centralAnswered(index, identifier: identifier, accepted: accepted)
        case .none:
            break
        }
    }

    /// One line per refused SMP packet would let a peer fill the journal
    /// (2,143 lines in five minutes from a hostile central): reported as a
    /// `RepeatedLine`.
    mutating func pairingRefused(_ index: Int, _ handle: UInt16) {
        guard let unreported = connections[index].smpLine.note(now: now) else { return }
        push(.pairingRefused(connection: handle, unreported: unreported))
    }
}
