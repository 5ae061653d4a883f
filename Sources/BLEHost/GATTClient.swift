/// A value carried in a client event (notification payloads: at most ATT_MTU - 3).
public typealias GATTValue = FixedBytes<248>

/// A characteristic found by discovery (Core Vol 3 Part G §4.6).
public struct DiscoveredCharacteristic {
    public var declarationHandle: UInt16 = 0
    public var properties = CharacteristicProperties(rawValue: 0)
    public var valueHandle: UInt16 = 0
    public var uuid = BLEUUID(uuid16: 0)
    public init() {}
}

/// A descriptor found by discovery (Core Vol 3 Part G §4.7.1).
public struct DiscoveredDescriptor {
    public var handle: UInt16 = 0
    public var uuid = BLEUUID(uuid16: 0)
    public init() {}
}

/// Events of the GATT client, one per finished procedure or received value.
public enum GATTClientEvent {
    case mtuExchanged(connection: UInt16, mtu: UInt16)
    /// Discover Primary Service By Service UUID finished; range nil when not found.
    case serviceDiscovered(connection: UInt16, start: UInt16, end: UInt16)
    case serviceNotFound(connection: UInt16)
    /// Discovery finished; the results are in `Host.gattClient(connection:)`.
    case characteristicsDiscovered(connection: UInt16, count: Int)
    case descriptorsDiscovered(connection: UInt16, count: Int)
    case writeCompleted(connection: UInt16, handle: UInt16)
    /// The value is in `GATTClient.readValue`.
    case readCompleted(connection: UInt16, handle: UInt16)
    /// The server answered with an ATT Error Response (Vol 3 Part F §3.4.1.1).
    case error(connection: UInt16, request: UInt8, handle: UInt16, code: UInt8)
    case notification(connection: UInt16, handle: UInt16, value: GATTValue)
    case indication(connection: UInt16, handle: UInt16, value: GATTValue)
    /// No response within 30 s: the bearer is dead and the link is being closed (§3.3.3).
    case timeout(connection: UInt16, request: UInt8)
    /// A response that did not fit the outstanding request was dropped.
    case unexpectedResponse(connection: UInt16, opcode: UInt8)
}

/// The procedure a client runs; one request outstanding per bearer (§3.3.2).
enum GATTProcedure: Equatable {
    case idle, exchangeMTU, discoverService, discoverCharacteristics, discoverDescriptors
    case write, prepareWrite, executeWrite, read
    /// Execute Write with flags 0 after a failed long write; the error is reported when it completes.
    case cancelWrite
}

/// Per-connection GATT client state: the outstanding request, the procedure's
/// progress and the discovery results, all fixed size.
public struct GATTClient: ~Copyable {
    public static let maxCharacteristics = 8
    public static let maxDescriptors = 8

    var procedure = GATTProcedure.idle
    var requestOpcode: UInt8 = 0
    public internal(set) var deadline: UInt64? = nil

    // Discovery.
    var serviceUUID = BLEUUID(uuid16: 0)
    var rangeEnd: UInt16 = 0
    public internal(set) var characteristics: InlineArray<8, DiscoveredCharacteristic> =
        InlineArray(repeating: DiscoveredCharacteristic())
    public internal(set) var characteristicCount = 0
    public internal(set) var descriptors: InlineArray<8, DiscoveredDescriptor> =
        InlineArray(repeating: DiscoveredDescriptor())
    public internal(set) var descriptorCount = 0

    // Writes and reads.
    var handle: UInt16 = 0
    var value = FixedBytes<512>()
    var offset = 0
    var chunk = 0
    public internal(set) var readValue = FixedBytes<512>()
    /// The error a cancelled long write reports once the server's queue is cleared.
    var cancelRequest: UInt8 = 0
    var cancelCode: UInt8 = 0

    public init() {}

    mutating func reset() {
        procedure = .idle
        requestOpcode = 0
        deadline = nil
        rangeEnd = 0
        characteristicCount = 0
        descriptorCount = 0
        handle = 0
        value.removeAll()
        offset = 0
        chunk = 0
        readValue.removeAll()
        cancelRequest = 0
        cancelCode = 0
    }

    /// The scalar part of the state, read at once; the buffers stay in place.
    var progress: GATTClientProgress {
        GATTClientProgress(
            procedure: procedure, requestOpcode: requestOpcode, handle: handle, offset: offset, chunk: chunk,
            valueCount: value.count, rangeEnd: rangeEnd, characteristicCount: characteristicCount,
            descriptorCount: descriptorCount, cancelRequest: cancelRequest, cancelCode: cancelCode)
    }

    public var isBusy: Bool { procedure != .idle }

    public mutating func characteristic(_ uuid: BLEUUID) -> DiscoveredCharacteristic? {
        for i in 0..<characteristicCount where characteristics[i].uuid == uuid { return characteristics[i] }
        return nil
    }

    /// The first descriptor of a type after a value handle (e.g. its CCCD).
    public mutating func descriptor(_ uuid: BLEUUID, after valueHandle: UInt16) -> DiscoveredDescriptor? {
        for i in 0..<descriptorCount where descriptors[i].uuid == uuid && descriptors[i].handle > valueHandle {
            return descriptors[i]
        }
        return nil
    }
}

struct GATTClientProgress {
    var procedure: GATTProcedure
    var requestOpcode: UInt8
    var handle: UInt16
    var offset: Int
    var chunk: Int
    var valueCount: Int
    var rangeEnd: UInt16
    var characteristicCount: Int
    var descriptorCount: Int
    var cancelRequest: UInt8
    var cancelCode: UInt8
}

extension Host {
    /// The GATT client state of a connection (discovery results, read value), in place.
    // Mutating only so that callers in other modules reach the table in place
    // (a borrowed call from there copies the whole host).
    public mutating func withGATTClient<R>(connection: UInt16, _ body: (inout GATTClient) -> R) -> R? {
        guard let index = connectionIndex(connection) else { return nil }
        return body(&connections[index].client)
    }

    /// A characteristic discovery found on a connection (Vol 3 Part G §4.6).
    public mutating func gattCharacteristic(connection: UInt16, _ uuid: BLEUUID) -> DiscoveredCharacteristic? {
        guard let index = connectionIndex(connection) else { return nil }
        return connections[index].client.characteristic(uuid)
    }

    /// The first descriptor of a type after a value handle (e.g. its CCCD).
    public mutating func gattDescriptor(connection: UInt16, _ uuid: BLEUUID, after valueHandle: UInt16) -> DiscoveredDescriptor? {
        guard let index = connectionIndex(connection) else { return nil }
        return connections[index].client.descriptor(uuid, after: valueHandle)
    }

    /// Exchange MTU: asks for ATT.maxMTU (Vol 3 Part G §4.3.1).
    @discardableResult
    public mutating func gattExchangeMTU(connection: UInt16) -> Bool {
        startRequest(connection, .exchangeMTU) { pdu in
            pdu.append(ATTOpcode.exchangeMTURequest)
            pdu.appendUInt16(ATT.maxMTU)
        }
    }

    /// Discover Primary Service By Service UUID (Vol 3 Part G §4.4.2): Find By Type Value.
    @discardableResult
    public mutating func gattDiscoverPrimaryService(connection: UInt16, uuid: BLEUUID) -> Bool {
        guard let index = idleClient(connection) else { return false }
        connections[index].client.serviceUUID = uuid
        return sendFindByTypeValue(index, start: 0x0001)
    }

    /// Discover All Characteristics of a Service (§4.6.1): Read By Type 0x2803.
    @discardableResult
    public mutating func gattDiscoverCharacteristics(connection: UInt16, start: UInt16, end: UInt16) -> Bool {
        guard let index = idleClient(connection) else { return false }
        connections[index].client.characteristicCount = 0
        connections[index].client.rangeEnd = end
        return sendReadByType(index, start: start)
    }

    /// Discover All Characteristic Descriptors (§4.7.1): Find Information.
    @discardableResult
    public mutating func gattDiscoverDescriptors(connection: UInt16, start: UInt16, end: UInt16) -> Bool {
        guard let index = idleClient(connection) else { return false }
        connections[index].client.descriptorCount = 0
        connections[index].client.rangeEnd = end
        return sendFindInformation(index, start: start)
    }

    /// Write Characteristic Value (§4.9.3), or Write Long Characteristic Values
    /// (§4.9.4: Prepare Write + Execute Write) when the value exceeds ATT_MTU - 3.
    @discardableResult
    public mutating func gattWrite(connection: UInt16, handle: UInt16, value: UnsafeRawBufferPointer) -> Bool {
        guard value.count <= ATT.maxValueLength, let index = idleClient(connection) else { return false }
        connections[index].client.handle = handle
        connections[index].client.value.removeAll()
        connections[index].client.value.append(value)
        connections[index].client.offset = 0
        if value.count <= Int(connections[index].bearer.mtu) - 3 {
            return startRequest(connection, .write) { pdu in
                pdu.append(ATTOpcode.writeRequest)
                pdu.appendUInt16(handle)
                pdu.append(value)
            }
        }
        return sendPrepareWrite(index)
    }

    /// Read Characteristic Value (§4.8.1), continued with Read Blob while the
    /// response fills the MTU (Read Long, §4.8.3).
    @discardableResult
    public mutating func gattRead(connection: UInt16, handle: UInt16) -> Bool {
        guard let index = idleClient(connection) else { return false }
        connections[index].client.handle = handle
        connections[index].client.readValue.removeAll()
        return startRequest(connection, .read) { pdu in
            pdu.append(ATTOpcode.readRequest)
            pdu.appendUInt16(handle)
        }
    }

    // MARK: - Requests

    @_addressableSelf func idleClient(_ connection: UInt16) -> Int? {
        guard let index = connectionIndex(connection), !connections[index].disconnecting,
              !connections[index].client.isBusy else { return nil }
        return index
    }

    mutating func startRequest(_ connection: UInt16, _ procedure: GATTProcedure, _ build: (inout ATTPDU) -> Void) -> Bool {
        // One outstanding request per bearer (Vol 3 Part F §3.3.2): continuations
        // of a procedure set it idle before asking for the next part.
        guard let index = connectionIndex(connection), !connections[index].disconnecting,
              connections[index].client.procedure == .idle else { return false }
        var pdu = ATTPDU()
        build(&pdu)
        guard sendATT(connection, pdu) else { return false }
        connections[index].client.procedure = procedure
        connections[index].client.requestOpcode = pdu[0]
        connections[index].client.deadline = now + ATT.transactionTimeout
        return true
    }

    mutating func sendFindByTypeValue(_ index: Int, start: UInt16) -> Bool {
        let uuid = connections[index].client.serviceUUID
        return startRequest(connections[index].handle, .discoverService) { pdu in
            pdu.append(ATTOpcode.findByTypeValueRequest)
            pdu.appendUInt16(start)
            pdu.appendUInt16(0xFFFF)
            pdu.appendUInt16(GATTType.primaryService)
            uuid.write(to: &pdu)
        }
    }

    mutating func sendReadByType(_ index: Int, start: UInt16) -> Bool {
        let end = connections[index].client.rangeEnd
        return startRequest(connections[index].handle, .discoverCharacteristics) { pdu in
            pdu.append(ATTOpcode.readByTypeRequest)
            pdu.appendUInt16(start)
            pdu.appendUInt16(end)
            pdu.appendUInt16(GATTType.characteristic)
        }
    }

    mutating func sendFindInformation(_ index: Int, start: UInt16) -> Bool {
        let end = connections[index].client.rangeEnd
        return startRequest(connections[index].handle, .discoverDescriptors) { pdu in
            pdu.append(ATTOpcode.findInformationRequest)
            pdu.appendUInt16(start)
            pdu.appendUInt16(end)
        }
    }

    mutating func sendPrepareWrite(_ index: Int) -> Bool {
        let client = connections[index].client.progress
        let chunk = min(client.valueCount - client.offset, Int(connections[index].bearer.mtu) - 5)
        connections[index].client.chunk = chunk
        var part = ATTPDU()
        connections[index].client.value.withBytes {
            part.append(UnsafeRawBufferPointer(rebasing: $0[client.offset..<(client.offset + chunk)]))
        }
        return startRequest(connections[index].handle, .prepareWrite) { pdu in
            pdu.append(ATTOpcode.prepareWriteRequest)
            pdu.appendUInt16(client.handle)
            pdu.appendUInt16(UInt16(client.offset))
            pdu.append(contentsOf: part)
        }
    }

    mutating func sendExecuteWrite(_ index: Int, commit: Bool) -> Bool {
        startRequest(connections[index].handle, .executeWrite) { pdu in
            pdu.append(ATTOpcode.executeWriteRequest)
            pdu.append(commit ? 1 : 0)
        }
    }

    // MARK: - Responses

    mutating func finishProcedure(_ index: Int, _ event: GATTClientEvent) {
        connections[index].client.procedure = .idle
        connections[index].client.deadline = nil
        push(.gattClient(event))
    }

    /// A PDU from the peer's server: notifications, indications and responses.
    mutating func handleClientPDU(_ index: Int, _ pdu: UnsafeRawBufferPointer) {
        let connection = connections[index].handle
        let opcode = pdu[0]
        if opcode == ATTOpcode.handleValueNotification || opcode == ATTOpcode.handleValueIndication {
            guard pdu.count >= 3 else { return dropped(.aclMalformed) }
            let handle = readUInt16(pdu, 1)
            let value = GATTValue(UnsafeRawBufferPointer(rebasing: pdu[3..<min(pdu.count, 3 + 248)]))
            push(.gattClient(opcode == ATTOpcode.handleValueNotification
                ? .notification(connection: connection, handle: handle, value: value)
                : .indication(connection: connection, handle: handle, value: value)))
            return
        }
        let client = connections[index].client.progress
        let expected = client.requestOpcode &+ 1
        guard client.procedure != .idle, opcode == expected || opcode == ATTOpcode.errorResponse else {
            return push(.gattClient(.unexpectedResponse(connection: connection, opcode: opcode)))
        }
        if opcode == ATTOpcode.errorResponse {
            guard pdu.count == 5, pdu[1] == client.requestOpcode else {
                return push(.gattClient(.unexpectedResponse(connection: connection, opcode: opcode)))
            }
            let handle = readUInt16(pdu, 2), code = pdu[4]
            // Attribute Not Found ends a discovery normally (Vol 3 Part G §4.4–4.7).
            if code == ATTError.attributeNotFound {
                switch client.procedure {
                case .discoverService: return finishProcedure(index, .serviceNotFound(connection: connection))
                case .discoverCharacteristics:
                    return finishProcedure(index, .characteristicsDiscovered(connection: connection, count: client.characteristicCount))
                case .discoverDescriptors:
                    return finishProcedure(index, .descriptorsDiscovered(connection: connection, count: client.descriptorCount))
                default: break
                }
            }
            if client.procedure == .prepareWrite {
                return cancelLongWrite(index, request: client.requestOpcode, code: code)
            }
            if client.procedure == .cancelWrite {
                return finishProcedure(index, .error(connection: connection, request: client.cancelRequest,
                                                     handle: client.handle, code: client.cancelCode))
            }
            return finishProcedure(index, .error(connection: connection, request: client.requestOpcode, handle: handle, code: code))
        }
        switch client.procedure {
        case .exchangeMTU:
            guard pdu.count == 3 else { return malformedResponse(index) }
            let mtu = max(ATT.defaultMTU, min(readUInt16(pdu, 1), ATT.maxMTU))
            connections[index].bearer.mtu = mtu
            connections[index].bearer.mtuExchanged = true
            finishProcedure(index, .mtuExchanged(connection: connection, mtu: mtu))
        case .discoverService:
            guard pdu.count >= 5, (pdu.count - 1) % 4 == 0 else { return malformedResponse(index) }
            finishProcedure(index, .serviceDiscovered(connection: connection, start: readUInt16(pdu, 1), end: readUInt16(pdu, 3)))
        case .discoverCharacteristics:
            handleCharacteristics(index, pdu)
        case .discoverDescriptors:
            handleDescriptors(index, pdu)
        case .write:
            finishProcedure(index, .writeCompleted(connection: connection, handle: client.handle))
        case .prepareWrite:
            // The echo must match what we sent (§4.9.4); otherwise cancel.
            // (The comparison stays inside withBytes: the pointer is valid only there.)
            let echoOK = pdu.count == 5 + client.chunk && readUInt16(pdu, 1) == client.handle
                && Int(readUInt16(pdu, 3)) == client.offset
                && connections[index].client.value.withBytes { all in
                    valuesEqual(UnsafeRawBufferPointer(rebasing: pdu[5...]),
                                UnsafeRawBufferPointer(rebasing: all[client.offset..<(client.offset + client.chunk)]))
                }
            guard echoOK else {
                return cancelLongWrite(index, request: ATTOpcode.prepareWriteRequest, code: ATTError.invalidPDU)
            }
            connections[index].client.offset += client.chunk
            connections[index].client.procedure = .idle
            if connections[index].client.offset < client.valueCount {
                _ = sendPrepareWrite(index)
            } else {
                _ = sendExecuteWrite(index, commit: true)
            }
        case .executeWrite:
            finishProcedure(index, .writeCompleted(connection: connection, handle: client.handle))
        case .cancelWrite:
            finishProcedure(index, .error(connection: connection, request: client.cancelRequest,
                                          handle: client.handle, code: client.cancelCode))
        case .read:
            let part = UnsafeRawBufferPointer(rebasing: pdu[1...])
            connections[index].client.readValue.append(part)
            let full = part.count == Int(connections[index].bearer.mtu) - 1
            let total = connections[index].client.readValue.count
            if full, total < ATT.maxValueLength {
                let handle = client.handle
                connections[index].client.procedure = .idle
                _ = startRequest(connection, .read) { next in
                    next.append(ATTOpcode.readBlobRequest)
                    next.appendUInt16(handle)
                    next.appendUInt16(UInt16(total))
                }
            } else {
                finishProcedure(index, .readCompleted(connection: connection, handle: client.handle))
            }
        case .idle:
            break
        }
    }

    /// Clears the server's prepare queue (Execute Write, flags 0) before reporting the error.
    mutating func cancelLongWrite(_ index: Int, request: UInt8, code: UInt8) {
        connections[index].client.cancelRequest = request
        connections[index].client.cancelCode = code
        connections[index].client.procedure = .idle
        if !startRequest(connections[index].handle, .cancelWrite, { pdu in
            pdu.append(ATTOpcode.executeWriteRequest)
            pdu.append(0)
        }) {
            finishProcedure(index, .error(connection: connections[index].handle, request: request,
                                          handle: connections[index].client.handle, code: code))
        }
    }

    mutating func malformedResponse(_ index: Int) {
        let client = connections[index].client.progress
        finishProcedure(index, .error(connection: connections[index].handle, request: client.requestOpcode,
                                      handle: 0, code: ATTError.invalidPDU))
    }

    mutating func handleCharacteristics(_ index: Int, _ pdu: UnsafeRawBufferPointer) {
        // Length 7 (16-bit UUID) or 21 (128-bit) per entry (Vol 3 Part G §4.6.1).
        guard pdu.count >= 2 else { return malformedResponse(index) }
        let length = Int(pdu[1])
        guard length == 7 || length == 21, (pdu.count - 2) % length == 0, pdu.count > 2 else {
            return malformedResponse(index)
        }
        var offset = 2
        var last: UInt16 = 0
        while offset + length <= pdu.count {
            var found = DiscoveredCharacteristic()
            found.declarationHandle = readUInt16(pdu, offset)
            found.properties = CharacteristicProperties(rawValue: pdu[offset + 2])
            found.valueHandle = readUInt16(pdu, offset + 3)
            found.uuid = BLEUUID(wire: UnsafeRawBufferPointer(rebasing: pdu[(offset + 5)..<(offset + length)])) ?? found.uuid
            last = found.declarationHandle
            if connections[index].client.characteristicCount < GATTClient.maxCharacteristics {
                connections[index].client.characteristics[connections[index].client.characteristicCount] = found
                connections[index].client.characteristicCount += 1
            }
            offset += length
        }
        continueDiscovery(index, after: last) { host, i, start in host.sendReadByType(i, start: start) }
    }

    mutating func handleDescriptors(_ index: Int, _ pdu: UnsafeRawBufferPointer) {
        guard pdu.count >= 2, pdu[1] == 1 || pdu[1] == 2 else { return malformedResponse(index) }
        let size = pdu[1] == 1 ? 2 : 16
        guard (pdu.count - 2) % (2 + size) == 0, pdu.count > 2 else { return malformedResponse(index) }
        var offset = 2
        var last: UInt16 = 0
        while offset + 2 + size <= pdu.count {
            var found = DiscoveredDescriptor()
            found.handle = readUInt16(pdu, offset)
            found.uuid = BLEUUID(wire: UnsafeRawBufferPointer(rebasing: pdu[(offset + 2)..<(offset + 2 + size)])) ?? found.uuid
            last = found.handle
            if connections[index].client.descriptorCount < GATTClient.maxDescriptors {
                connections[index].client.descriptors[connections[index].client.descriptorCount] = found
                connections[index].client.descriptorCount += 1
            }
            offset += 2 + size
        }
        continueDiscovery(index, after: last) { host, i, start in host.sendFindInformation(i, start: start) }
    }

    /// Asks for the next part of a discovery, or finishes it at the range end.
    mutating func continueDiscovery(_ index: Int, after last: UInt16, _ next: (inout Host, Int, UInt16) -> Bool) {
        let client = connections[index].client.progress
        let connection = connections[index].handle
        // A server that does not advance would loop forever: treat it as the end.
        if last >= client.rangeEnd || last == 0xFFFF || last == 0 {
            let event: GATTClientEvent = client.procedure == .discoverCharacteristics
                ? .characteristicsDiscovered(connection: connection, count: client.characteristicCount)
                : .descriptorsDiscovered(connection: connection, count: client.descriptorCount)
            return finishProcedure(index, event)
        }
        connections[index].client.procedure = .idle
        let procedure = client.procedure
        if !next(&self, index, last + 1) {
            connections[index].client.procedure = procedure
        }
    }

    /// ATT transaction timeouts (Vol 3 Part F §3.3.3): the bearer is unusable, close the link.
    mutating func tickClients() {
        for i in 0..<Host.connectionCapacity where connections[i].inUse {
            guard let deadline = connections[i].client.deadline, now >= deadline else { continue }
            let request = connections[i].client.requestOpcode
            connections[i].client.procedure = .idle
            connections[i].client.deadline = nil
            push(.gattClient(.timeout(connection: connections[i].handle, request: request)))
            disconnect(handle: connections[i].handle, reason: HCIStatus.remoteUserTerminated)
        }
    }
}
