/// ATT on the LE fixed channel 0x0004 (Core Vol 3 Part F): each PDU goes to
/// our server or our client by its opcode, here and nowhere else; and the
/// client's procedures as the application starts them.
extension Host {
    /// Routes one ATT PDU by opcode: requests, commands and confirmations to
    /// the server; responses to the client entry point that takes them;
    /// notifications and indications to the application's client delegate.
    mutating func handleATT<D: GATTDelegate & ~Copyable>(
        _ index: Int, _ pdu: UnsafeRawBufferPointer, delegate: inout D
    ) {
        guard let opcode = pdu.first else { return }
        let connection = connections[index].handle
        guard ATTRoute.toClient(opcode) else { return serve(index, connection, pdu, delegate: &delegate) }
        let step: GATTClientStep
        switch opcode {
        case ATTOpcode.handleValueNotification, ATTOpcode.handleValueIndication:
            guard pdu.count >= 3 else { return inputDropped(.attMalformed) }
            let attribute = readUInt16(pdu, 1)
            let value = UnsafeRawBufferPointer(rebasing: pdu[3...])
            if opcode == ATTOpcode.handleValueNotification {
                return delegate.clientNotification(connection: connection, attribute: attribute, value: value)
            }
            // Confirmed before the application sees it, so the peer's bearer never
            // stalls on an application that ignores indications (§3.4.7.2).
            owed[index].confirmation = true
            owe()
            payOwed(index)
            return delegate.clientIndication(connection: connection, attribute: attribute, value: value)
        case ATTOpcode.errorResponse:
            return continueProcedure(index, connection, pdu)
        case ATTOpcode.exchangeMTUResponse where client.links[index].awaits(opcode):
            step = client.exchangeMTUResponse(index, connection, pdu, bearer: &connections[index].bearer)
        case ATTOpcode.findByTypeValueResponse where client.links[index].awaits(opcode):
            step = client.findByTypeValueResponse(index, connection, pdu)
        case ATTOpcode.readByTypeResponse where client.links[index].awaits(opcode):
            return continueProcedure(index, connection, pdu)
        case ATTOpcode.findInformationResponse where client.links[index].awaits(opcode):
            return continueProcedure(index, connection, pdu)
        case ATTOpcode.writeResponse where client.links[index].awaits(opcode):
            step = client.writeResponse(index, connection)
        case ATTOpcode.prepareWriteResponse where client.links[index].awaits(opcode):
            return continueProcedure(index, connection, pdu)
        case ATTOpcode.executeWriteResponse where client.links[index].awaits(opcode):
            step = client.executeWriteResponse(index, connection)
        case ATTOpcode.readResponse where client.links[index].awaits(opcode),
             ATTOpcode.readBlobResponse where client.links[index].awaits(opcode):
            return continueProcedure(index, connection, pdu)
        default:
            // A response to nothing we asked, or one we never ask for.
            step = .unexpected(opcode: opcode)
        }
        follow(step, index, connection, queued: nil)
    }

    /// A response whose procedure may go on with another request (discovery,
    /// a long write, a long read, an error that cancels a long write). The
    /// request is built where it is sent, in the next transmit slot, as the
    /// server builds its responses: no PDU-sized temporary (ATT_MTU, 517 bytes
    /// on Linux) is cleared and copied per response. Reserving commits
    /// nothing: a response that ends the procedure leaves the slot free.
    mutating func continueProcedure(_ index: Int, _ connection: UInt16, _ pdu: UnsafeRawBufferPointer) {
        let mtu = connections[index].bearer.mtu
        guard let slot = aclQueue.reserve(handle: connection, channel: L2CAPChannel.att) else {
            // The queue is full: the response is still taken; a request it asks for is not sent.
            var request = Capacity.ATTPDU()
            let step = client.respond(index, connection, pdu, mtu: mtu, into: &request)
            return follow(step, index, connection, queued: nil)
        }
        let step = client.respond(index, connection, pdu, mtu: mtu, into: &aclQueue.pdus[slot].contents)
        var queued: UInt8? = nil
        if case .send = step, !aclQueue.pdus[slot].isEmpty {
            aclQueue.commit()
            queued = aclQueue.pdus[slot][0]
        }
        follow(step, index, connection, queued: queued)
    }

    /// Does what a client entry point asked: note the request it built as sent
    /// (`queued`: its opcode, nil when it found no room), or report.
    mutating func follow(_ step: GATTClientStep, _ index: Int, _ connection: UInt16, queued: UInt8?) {
        switch step {
        case .none:
            break
        case .send(let otherwise):
            if let opcode = queued {
                client.sent(index, opcode: opcode, deadline: now + ATT.transactionTimeout)
            } else {
                outputDropped(.transmitQueueFull)
                if let otherwise {
                    client.finish(index)
                    push(.gattClient(otherwise))
                }
            }
        case .finished(let event):
            client.finish(index)
            push(.gattClient(event))
        case .unexpected(let opcode):
            push(.gattClient(.unexpectedResponse(connection: connection, opcode: opcode)))
        }
    }

    /// A request, command or confirmation for our server. The response is
    /// written into its transmit slot when the link has room, else into the
    /// link's owed answers; a request that finds an answer already owed (a
    /// peer that does not wait for its responses, Vol 3 Part F §3.3.2) is
    /// dropped unserved. The bearer is updated in place.
    @inline(__always)
    mutating func serve<D: GATTServerDelegate & ~Copyable>(
        _ index: Int, _ connection: UInt16, _ pdu: UnsafeRawBufferPointer, delegate: inout D
    ) {
        // Answers owed to this link go out before this one's.
        if !owed[index].isEmpty { payOwed(index) }
        let answers = ATTRoute.expectsResponse(pdu[0])
        if !answers || canSend(index), let slot = aclQueue.reserve(handle: connection, channel: L2CAPChannel.att) {
            let note = server.receive(
                pdu, connection: connection, bearer: &connections[index].bearer, delegate: &delegate,
                response: &aclQueue.pdus[slot].contents)
            noteAsking(index, aclQueue.pdus[slot].isEmpty ? nil : aclQueue.pdus[slot][0])
            if !aclQueue.pdus[slot].isEmpty { aclQueue.commit() }
            return report(connection, note)
        }
        if !answers {
            // A command or confirmation with the queue full: served, nothing to send.
            var none = Capacity.ATTPDU()
            let note = server.receive(
                pdu, connection: connection, bearer: &connections[index].bearer, delegate: &delegate, response: &none)
            return report(connection, note)
        }
        guard owed[index].att.isEmpty else { return requestDropped(index, .attPipelined) }
        let note = server.receive(
            pdu, connection: connection, bearer: &connections[index].bearer, delegate: &delegate,
            response: &owed[index].att.contents)
        noteAsking(index, owed[index].att.isEmpty ? nil : owed[index].att[0])
        owe()
        report(connection, note)
    }

    /// The idle clock counts what an asker does, not any request: a write the
    /// server accepted (a subscription, a question, a long question's Execute
    /// Write). Reads, discovery and Exchange MTU cost nothing to repeat, so a
    /// central that only sends those every 59 s is still idle and its slot is
    /// freed after `idleTimeout`.
    mutating func noteAsking(_ index: Int, _ response: UInt8?) {
        if response == ATTOpcode.writeResponse || response == ATTOpcode.executeWriteResponse {
            connections[index].lastRequest = now
        }
    }

    mutating func report(_ connection: UInt16, _ note: ATTServerNote) {
        switch note {
        case .mtuExchanged(let mtu):
            push(.mtuExchanged(connection: connection, mtu: mtu))
        case .subscription(let attribute, let value):
            push(.subscriptionChanged(connection: connection, attribute: attribute, value: value))
        case .none:
            break
        }
    }

    /// ATT transaction timeouts (Vol 3 Part F §3.3.3): the bearer is unusable, close the link.
    mutating func tickClients() {
        for i in 0..<linkSlots where connections[i].inUse && client.links[i].deadline != nil {
            guard let request = client.timedOut(i, now: now) else { continue }
            closeLink(i, .gattClient(.timeout(connection: connections[i].handle, request: request)))
        }
    }

    // MARK: - The client's procedures (Vol 3 Part G §4), started by the application

    /// Exchange MTU: asks for ATT.maxMTU (§4.3.1).
    @discardableResult
    public mutating func clientExchangeMTU(connection: UInt16) -> Bool {
        guard let (link, slot) = beginClientProcedure(connection) else { return false }
        client.exchangeMTU(link, into: &aclQueue.pdus[slot].contents)
        return sendClientProcedure(link, slot)
    }

    /// Discover Primary Service By Service UUID (§4.4.2).
    @discardableResult
    public mutating func clientDiscoverPrimaryService(connection: UInt16, uuid: BLEUUID) -> Bool {
        guard let (link, slot) = beginClientProcedure(connection) else { return false }
        client.discoverPrimaryService(link, uuid, into: &aclQueue.pdus[slot].contents)
        return sendClientProcedure(link, slot)
    }

    /// Discover All Characteristics of a Service (§4.6.1).
    @discardableResult
    public mutating func clientDiscoverCharacteristics(connection: UInt16, start: UInt16, end: UInt16) -> Bool {
        guard let (link, slot) = beginClientProcedure(connection) else { return false }
        client.discoverCharacteristics(link, start: start, end: end, into: &aclQueue.pdus[slot].contents)
        return sendClientProcedure(link, slot)
    }

    /// Discover All Characteristic Descriptors (§4.7.1).
    @discardableResult
    public mutating func clientDiscoverDescriptors(connection: UInt16, start: UInt16, end: UInt16) -> Bool {
        guard let (link, slot) = beginClientProcedure(connection) else { return false }
        client.discoverDescriptors(link, start: start, end: end, into: &aclQueue.pdus[slot].contents)
        return sendClientProcedure(link, slot)
    }

    /// Write Characteristic Value (§4.9.3), long when it exceeds ATT_MTU - 3 (§4.9.4).
    @discardableResult
    public mutating func clientWrite(connection: UInt16, attribute: UInt16, value: UnsafeRawBufferPointer) -> Bool {
        guard value.count <= ATT.maxValueLength else { return false }
        guard let (link, slot) = beginClientProcedure(connection) else { return false }
        client.write(link, attribute: attribute, value, mtu: connections[link].bearer.mtu, into: &aclQueue.pdus[slot].contents)
        return sendClientProcedure(link, slot)
    }

    /// Read (Long) Characteristic Value (§4.8.1, §4.8.3); the value is then in
    /// the link's `readValue`.
    @discardableResult
    public mutating func clientRead(connection: UInt16, attribute: UInt16) -> Bool {
        guard let (link, slot) = beginClientProcedure(connection) else { return false }
        client.read(link, attribute: attribute, into: &aclQueue.pdus[slot].contents)
        return sendClientProcedure(link, slot)
    }

    /// A characteristic discovery found on a connection. Out of line: the
    /// central asks for three, each inlined the search.
    @inline(never) public func clientCharacteristic(connection: UInt16, _ uuid: BLEUUID) -> DiscoveredCharacteristic? {
        guard let index = connectionIndex(connection) else { return nil }
        return client.links[index].characteristic(uuid)
    }

    /// The first descriptor of a type after a value handle (e.g. its CCCD).
    public func clientDescriptor(
        connection: UInt16, _ uuid: BLEUUID, after valueHandle: UInt16
    ) -> DiscoveredDescriptor? {
        guard let index = connectionIndex(connection) else { return nil }
        return client.links[index].descriptor(uuid, after: valueHandle)
    }

    /// The client's state of a connection (discovery results, read value), in place.
    public mutating func withClientLink<R>(connection: UInt16, _ body: (inout GATTClientLink) -> R) -> R? {
        guard let index = connectionIndex(connection) else { return nil }
        return body(&client.links[index])
    }

    /// One outstanding request per bearer (Vol 3 Part F §3.3.2): a procedure
    /// starts only on an idle link, and only when its first request is queued.
    /// The request is built in its transmit slot (no temporary to clear and copy):
    /// this reserves it (nil: not now), `sendClientProcedure` queues it. Out of
    /// line, both: inlined into each of the six procedures, they were most of each.
    @inline(never) mutating func beginClientProcedure(_ connection: UInt16) -> (link: Int, slot: Int)? {
        guard let index = connectionIndex(connection), !connections[index].disconnecting,
              !client.links[index].isBusy else { return nil }
        guard let slot = aclQueue.reserve(handle: connection, channel: L2CAPChannel.att) else {
            outputDropped(.transmitQueueFull)
            return nil
        }
        return (index, slot)
    }

    /// Queues the request built in `slot` (`beginClientProcedure`): outstanding from now on.
    @inline(never) mutating func sendClientProcedure(_ link: Int, _ slot: Int) -> Bool {
        aclQueue.commit()
        client.sent(link, opcode: aclQueue.pdus[slot][0], deadline: now + ATT.transactionTimeout)
        return true
    }
}
