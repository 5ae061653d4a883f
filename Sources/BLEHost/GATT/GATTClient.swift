/// The application's side of GATT, both roles: what our server serves and
/// what our client is sent. One value, so the packet path carries one delegate.
public typealias GATTDelegate = GATTServerDelegate & GATTClientDelegate

/// The GATT client (Core Vol 3 Part G over ATT, Part F), beside `ATTServer`:
/// the procedures we run against a peer's server, per link. Requests are
/// built into a PDU the host sends; each response PDU has its entry point,
/// which the host calls by opcode (`Host.handleATT`) and whose step it follows.
public struct GATTClient: ~Copyable {
    let pin = InPlacePin()
    public internal(set) var links: Capacity.PerLink<GATTClientLink> = InlineArray(filling: { GATTClientLink() })

    public init() {}

    // MARK: - Requests (Vol 3 Part G §4)

    /// Exchange MTU: asks for ATT.maxMTU (§4.3.1).
    mutating func exchangeMTU(_ link: Int, into request: inout Capacity.ATTPDU) {
        request.append(ATTOpcode.exchangeMTURequest)
        request.appendUInt16(ATT.maxMTU)
        links[link].procedure = .exchangeMTU
    }

    /// Discover Primary Service By Service UUID (§4.4.2): Find By Type Value.
    mutating func discoverPrimaryService(_ link: Int, _ uuid: BLEUUID, into request: inout Capacity.ATTPDU) {
        links[link].serviceUUID = uuid
        findByTypeValue(link, start: 0x0001, into: &request)
    }

    /// Discover All Characteristics of a Service (§4.6.1): Read By Type 0x2803.
    mutating func discoverCharacteristics(_ link: Int, start: UInt16, end: UInt16, into request: inout Capacity.ATTPDU) {
        links[link].characteristicCount = 0
        links[link].rangeEnd = end
        readByType(link, start: start, into: &request)
    }

    /// Discover All Characteristic Descriptors (§4.7.1): Find Information.
    mutating func discoverDescriptors(_ link: Int, start: UInt16, end: UInt16, into request: inout Capacity.ATTPDU) {
        links[link].descriptorCount = 0
        links[link].rangeEnd = end
        findInformation(link, start: start, into: &request)
    }

    /// Write Characteristic Value (§4.9.3), or Write Long Characteristic Values
    /// (§4.9.4: Prepare Write + Execute Write) when the value exceeds ATT_MTU - 3.
    mutating func write(_ link: Int, attribute: UInt16, _ value: UnsafeRawBufferPointer, mtu: UInt16,
                        into request: inout Capacity.ATTPDU) {
        links[link].attribute = attribute
        links[link].value.removeAll()
        links[link].value.append(value)
        links[link].offset = 0
        guard value.count <= Int(mtu) &- 3 else { return prepareWrite(link, mtu: mtu, into: &request) }
        request.append(ATTOpcode.writeRequest)
        request.appendUInt16(attribute)
        request.append(value)
        links[link].procedure = .write
    }

    /// Read Characteristic Value (§4.8.1), continued with Read Blob while the
    /// response fills the MTU (Read Long, §4.8.3).
    mutating func read(_ link: Int, attribute: UInt16, into request: inout Capacity.ATTPDU) {
        links[link].attribute = attribute
        links[link].readValue.removeAll()
        request.append(ATTOpcode.readRequest)
        request.appendUInt16(attribute)
        links[link].procedure = .read
    }

    mutating func findByTypeValue(_ link: Int, start: UInt16, into request: inout Capacity.ATTPDU) {
        request.append(ATTOpcode.findByTypeValueRequest)
        request.appendUInt16(start)
        request.appendUInt16(0xFFFF)
        request.appendUInt16(GATTType.primaryService)
        links[link].serviceUUID.write(to: &request)
        links[link].procedure = .discoverService
    }

    mutating func readByType(_ link: Int, start: UInt16, into request: inout Capacity.ATTPDU) {
        request.append(ATTOpcode.readByTypeRequest)
        request.appendUInt16(start)
        request.appendUInt16(links[link].rangeEnd)
        request.appendUInt16(GATTType.characteristic)
        links[link].procedure = .discoverCharacteristics
    }

    mutating func findInformation(_ link: Int, start: UInt16, into request: inout Capacity.ATTPDU) {
        request.append(ATTOpcode.findInformationRequest)
        request.appendUInt16(start)
        request.appendUInt16(links[link].rangeEnd)
        links[link].procedure = .discoverDescriptors
    }

    mutating func prepareWrite(_ link: Int, mtu: UInt16, into request: inout Capacity.ATTPDU) {
        let offset = links[link].offset
        let chunk = min(links[link].value.count &- offset, Int(mtu) &- 5)
        links[link].chunk = chunk
        request.append(ATTOpcode.prepareWriteRequest)
        request.appendUInt16(links[link].attribute)
        request.appendUInt16(UInt16(offset))
        _ = links[link].value.withBytes {
            request.append(UnsafeRawBufferPointer(rebasing: $0[offset..<(offset &+ chunk)]))
        }
        links[link].procedure = .prepareWrite
    }

    mutating func executeWrite(_ link: Int, commit: Bool, into request: inout Capacity.ATTPDU) {
        request.append(ATTOpcode.executeWriteRequest)
        request.append(commit ? 1 : 0)
        links[link].procedure = commit ? .executeWrite : .cancelWrite
    }

    /// The request built last was queued: it is outstanding until its response or `deadline`.
    mutating func sent(_ link: Int, opcode: UInt8, deadline: UInt64) {
        links[link].requestOpcode = opcode
        links[link].deadline = deadline
    }

    /// A procedure's first request could not be queued: the link stays idle.
    mutating func notSent(_ link: Int) { links[link].procedure = .idle }

    /// Ends the procedure (after its result, a timeout or a failed cancel).
    mutating func finish(_ link: Int) {
        links[link].procedure = .idle
        links[link].deadline = nil
    }

    /// ATT transaction timeout (Vol 3 Part F §3.3.3): the request that got no
    /// response by `now`, if any; the procedure is over.
    mutating func timedOut(_ link: Int, now: UInt64) -> UInt8? {
        guard let deadline = links[link].deadline, now >= deadline else { return nil }
        finish(link)
        return links[link].requestOpcode
    }

    // MARK: - Responses (Vol 3 Part F §3.4), one entry point per PDU
    // Offsets, lengths and counts below wrap (&+, &-): they are bounded by the
    // PDU (≤ ATT_MTU), the tables' capacities and the MTU (≥ 23), and handles
    // by `discoveryContinues` (never 0xFFFF before + 1), so none can overflow.

    /// Error Response (§3.4.1.1). Attribute Not Found ends a discovery normally
    /// (Vol 3 Part G §4.4–4.7); an error during a long write first clears the
    /// server's prepare queue.
    mutating func errorResponse(_ link: Int, _ connection: UInt16, _ pdu: UnsafeRawBufferPointer,
                                into request: inout Capacity.ATTPDU) -> GATTClientStep {
        guard links[link].procedure != .idle, pdu.count == 5, pdu[1] == links[link].requestOpcode else {
            return .unexpected(opcode: ATTOpcode.errorResponse)
        }
        let attribute = readUInt16(pdu, 2), code = pdu[4]
        if code == ATTError.attributeNotFound {
            switch links[link].procedure {
            case .discoverService: return .finished(.serviceNotFound(connection: connection))
            case .discoverCharacteristics:
                return .finished(.characteristicsDiscovered(connection: connection, count: links[link].characteristicCount))
            case .discoverDescriptors:
                return .finished(.descriptorsDiscovered(connection: connection, count: links[link].descriptorCount))
            default: break
            }
        }
        switch links[link].procedure {
        case .prepareWrite:
            return cancelLongWrite(link, connection, request: links[link].requestOpcode, code: code, into: &request)
        case .cancelWrite:
            return .finished(cancelledWriteError(link, connection))
        default:
            return .finished(.error(connection: connection, request: links[link].requestOpcode, attribute: attribute, code: code))
        }
    }

    /// Exchange MTU Response (§3.4.2.2): the bearer's MTU is the smaller of the two.
    mutating func exchangeMTUResponse(_ link: Int, _ connection: UInt16, _ pdu: UnsafeRawBufferPointer,
                                      bearer: inout ATTBearer) -> GATTClientStep {
        guard pdu.count == 3 else { return malformed(link, connection) }
        let mtu = max(ATT.defaultMTU, min(readUInt16(pdu, 1), ATT.maxMTU))
        bearer.mtu = mtu
        bearer.mtuExchanged = true
        return .finished(.mtuExchanged(connection: connection, mtu: mtu))
    }

    /// Find By Type Value Response (§3.4.3.4): the service's first handle range.
    mutating func findByTypeValueResponse(_ link: Int, _ connection: UInt16, _ pdu: UnsafeRawBufferPointer) -> GATTClientStep {
        guard pdu.count >= 5, (pdu.count - 1) % 4 == 0 else { return malformed(link, connection) }
        return .finished(.serviceDiscovered(connection: connection, start: readUInt16(pdu, 1), end: readUInt16(pdu, 3)))
    }

    /// Read By Type Response (§3.4.4.2) to characteristic discovery: entries of
    /// 7 (16-bit UUID) or 21 (128-bit) bytes (Vol 3 Part G §4.6.1).
    mutating func readByTypeResponse(_ link: Int, _ connection: UInt16, _ pdu: UnsafeRawBufferPointer,
                                     into request: inout Capacity.ATTPDU) -> GATTClientStep {
        guard pdu.count >= 2 else { return malformed(link, connection) }
        let length = Int(pdu[1])
        guard length == 7 || length == 21, (pdu.count &- 2) % length == 0, pdu.count > 2 else {
            return malformed(link, connection)
        }
        var offset = 2
        var last: UInt16 = 0
        while offset &+ length <= pdu.count {
            var found = DiscoveredCharacteristic()
            found.declarationHandle = readUInt16(pdu, offset)
            found.properties = CharacteristicProperties(rawValue: pdu[offset &+ 2])
            found.valueHandle = readUInt16(pdu, offset &+ 3)
            found.uuid = BLEUUID(wire: UnsafeRawBufferPointer(rebasing: pdu[(offset &+ 5)..<(offset &+ length)])) ?? found.uuid
            last = found.declarationHandle
            let count = links[link].characteristicCount
            if count < links[link].characteristics.count {
                links[link].characteristics[count] = found
                links[link].characteristicCount &+= 1
            }
            offset &+= length
        }
        guard discoveryContinues(link, after: last) else {
            return .finished(.characteristicsDiscovered(connection: connection, count: links[link].characteristicCount))
        }
        readByType(link, start: last &+ 1, into: &request)
        return .send(otherwise: nil)
    }

    /// Find Information Response (§3.4.3.2) to descriptor discovery (Vol 3 Part G §4.7.1).
    mutating func findInformationResponse(_ link: Int, _ connection: UInt16, _ pdu: UnsafeRawBufferPointer,
                                          into request: inout Capacity.ATTPDU) -> GATTClientStep {
        guard pdu.count >= 2, pdu[1] == 1 || pdu[1] == 2 else { return malformed(link, connection) }
        let size = pdu[1] == 1 ? 2 : 16
        guard (pdu.count &- 2) % (2 &+ size) == 0, pdu.count > 2 else { return malformed(link, connection) }
        var offset = 2
        var last: UInt16 = 0
        while offset &+ 2 &+ size <= pdu.count {
            var found = DiscoveredDescriptor()
            found.handle = readUInt16(pdu, offset)
            found.uuid = BLEUUID(wire: UnsafeRawBufferPointer(rebasing: pdu[(offset &+ 2)..<(offset &+ 2 &+ size)])) ?? found.uuid
            last = found.handle
            let count = links[link].descriptorCount
            if count < links[link].descriptors.count {
                links[link].descriptors[count] = found
                links[link].descriptorCount &+= 1
            }
            offset &+= 2 &+ size
        }
        guard discoveryContinues(link, after: last) else {
            return .finished(.descriptorsDiscovered(connection: connection, count: links[link].descriptorCount))
        }
        findInformation(link, start: last &+ 1, into: &request)
        return .send(otherwise: nil)
    }

    /// Write Response (§3.4.5.2).
    mutating func writeResponse(_ link: Int, _ connection: UInt16) -> GATTClientStep {
        .finished(.writeCompleted(connection: connection, attribute: links[link].attribute))
    }

    /// Prepare Write Response (§3.4.6.2): the echo must match what we sent
    /// (Vol 3 Part G §4.9.4), else the write is cancelled; then the next part,
    /// or Execute Write.
    mutating func prepareWriteResponse(_ link: Int, _ connection: UInt16, _ pdu: UnsafeRawBufferPointer, mtu: UInt16,
                                       into request: inout Capacity.ATTPDU) -> GATTClientStep {
        let offset = links[link].offset, chunk = links[link].chunk
        let echoed = pdu.count == 5 &+ chunk && readUInt16(pdu, 1) == links[link].attribute
            && Int(readUInt16(pdu, 3)) == offset
            && links[link].value.withBytes {
                valuesEqual(UnsafeRawBufferPointer(rebasing: pdu[5...]),
                            UnsafeRawBufferPointer(rebasing: $0[offset..<(offset &+ chunk)]))
            }
        guard echoed else {
            return cancelLongWrite(link, connection, request: ATTOpcode.prepareWriteRequest, code: ATTError.invalidPDU,
                                   into: &request)
        }
        links[link].offset &+= chunk
        if links[link].offset < links[link].value.count {
            prepareWrite(link, mtu: mtu, into: &request)
        } else {
            executeWrite(link, commit: true, into: &request)
        }
        return .send(otherwise: nil)
    }

    /// Execute Write Response (§3.4.6.4): the long write is done, or, after a
    /// cancel, its error is reported.
    mutating func executeWriteResponse(_ link: Int, _ connection: UInt16) -> GATTClientStep {
        if links[link].procedure == .cancelWrite { return .finished(cancelledWriteError(link, connection)) }
        return .finished(.writeCompleted(connection: connection, attribute: links[link].attribute))
    }

    /// Read Response or Read Blob Response (§3.4.4.4, §3.4.4.6): a full
    /// response asks for the next part (Read Long, Vol 3 Part G §4.8.3).
    mutating func readResponse(_ link: Int, _ connection: UInt16, _ pdu: UnsafeRawBufferPointer, mtu: UInt16,
                               into request: inout Capacity.ATTPDU) -> GATTClientStep {
        let part = UnsafeRawBufferPointer(rebasing: pdu[1...])
        links[link].readValue.append(part)
        let total = links[link].readValue.count
        guard part.count == Int(mtu) &- 1, total < ATT.maxValueLength else {
            return .finished(.readCompleted(connection: connection, attribute: links[link].attribute))
        }
        request.append(ATTOpcode.readBlobRequest)
        request.appendUInt16(links[link].attribute)
        request.appendUInt16(UInt16(total))
        return .send(otherwise: nil)
    }

    /// The entry point of a response whose procedure may go on (the host
    /// routed it here by opcode, `Host.continueProcedure`); its next request,
    /// if any, is written into `request`.
    mutating func respond(_ link: Int, _ connection: UInt16, _ pdu: UnsafeRawBufferPointer, mtu: UInt16,
                          into request: inout Capacity.ATTPDU) -> GATTClientStep {
        switch pdu[0] {
        case ATTOpcode.errorResponse: errorResponse(link, connection, pdu, into: &request)
        case ATTOpcode.readByTypeResponse: readByTypeResponse(link, connection, pdu, into: &request)
        case ATTOpcode.findInformationResponse: findInformationResponse(link, connection, pdu, into: &request)
        case ATTOpcode.prepareWriteResponse: prepareWriteResponse(link, connection, pdu, mtu: mtu, into: &request)
        default: readResponse(link, connection, pdu, mtu: mtu, into: &request)
        }
    }

    // MARK: - Helpers

    /// Clears the server's prepare queue (Execute Write, flags 0) before reporting the error.
    mutating func cancelLongWrite(_ link: Int, _ connection: UInt16, request opcode: UInt8, code: UInt8,
                                  into request: inout Capacity.ATTPDU) -> GATTClientStep {
        links[link].cancelRequest = opcode
        links[link].cancelCode = code
        executeWrite(link, commit: false, into: &request)
        return .send(otherwise: cancelledWriteError(link, connection))
    }

    func cancelledWriteError(_ link: Int, _ connection: UInt16) -> GATTClientEvent {
        .error(connection: connection, request: links[link].cancelRequest, attribute: links[link].attribute,
               code: links[link].cancelCode)
    }

    func malformed(_ link: Int, _ connection: UInt16) -> GATTClientStep {
        .finished(.error(connection: connection, request: links[link].requestOpcode, attribute: 0, code: ATTError.invalidPDU))
    }

    /// Whether a discovery asks for more after the last handle it got. A server
    /// that does not advance would loop forever: that is the end too.
    func discoveryContinues(_ link: Int, after last: UInt16) -> Bool {
        !(last >= links[link].rangeEnd || last == 0xFFFF || last == 0)
    }
}
