/// The ATT server over a static GATTDatabase (Core Vol 3 Part F; modelled on
/// BTstack's att_server.c and Bumble's att.py/gatt_server.py). Every request gets
/// its response or the Error Response the specification prescribes; commands and
/// PDUs we do not handle are dropped.
public struct ATTServer: ~Copyable {
    let pin = InPlacePin()
    public internal(set) var database: GATTDatabase

    public init(database: consuming GATTDatabase) { self.database = database }

    /// Handles one request/command/confirmation. A response, if any, is left in
    /// `response` (empty otherwise).
    public mutating func receive<D: GATTServerDelegate & ~Copyable>(
        _ pdu: UnsafeRawBufferPointer, connection: UInt16, bearer: inout ATTBearer,
        delegate: inout D, response: inout Capacity.ATTPDU
    ) -> ATTServerNote {
        response.removeAll()
        guard let opcode = pdu.first else { return .none }
        let request = ATTRequest(pdu: pdu, connection: connection, mtu: Int(bearer.mtu))
        // No PDU may exceed ATT_MTU (Vol 3 Part F §3.2.8); answering one could not fit either.
        if pdu.count > Int(bearer.mtu) {
            if ATTRoute.expectsResponse(opcode) { request.error(ATTError.invalidPDU, 0, &response) }
            return .none
        }
        switch opcode {
        case ATTOpcode.exchangeMTURequest:
            guard pdu.count == 3 else {
                request.error(ATTError.invalidPDU, 0, &response)
                return .none
            }
            // The ATT MTU is set once per connection (Vol 3 Part F §3.4.2.2: the
            // client sends this request once): a repeated request gets the same
            // response and changes nothing. (BTstack's att.c and Bumble take
            // every new value; a peer could then shrink the MTU under a
            // notification being built for the old one.)
            response.append(ATTOpcode.exchangeMTUResponse)
            response.appendUInt16(ATT.maxMTU)
            guard !bearer.mtuExchanged else { return .none }
            let clientMTU = readUInt16(pdu, 1)
            bearer.mtu = max(ATT.defaultMTU, min(clientMTU, ATT.maxMTU))
            bearer.mtuExchanged = true
            return .mtuExchanged(bearer.mtu)
        case ATTOpcode.findInformationRequest:
            findInformation(request, &response)
        case ATTOpcode.findByTypeValueRequest:
            findByTypeValue(request, &response)
        case ATTOpcode.readByTypeRequest:
            readByType(request, bearer, &delegate, &response)
        case ATTOpcode.readRequest, ATTOpcode.readBlobRequest:
            read(request, bearer, &delegate, &response)
        case ATTOpcode.readMultipleRequest:
            readMultiple(request, bearer, &delegate, &response)
        case ATTOpcode.readByGroupTypeRequest:
            readByGroupType(request, &response)
        case ATTOpcode.writeRequest, ATTOpcode.writeCommand:
            return write(request, &bearer, &delegate, &response)
        case ATTOpcode.prepareWriteRequest:
            prepareWrite(request, &bearer, &response)
        case ATTOpcode.executeWriteRequest:
            return executeWrite(request, &bearer, &delegate, &response)
        case ATTOpcode.handleValueConfirmation:
            guard pdu.count == 1, bearer.indicationPending else { return .none }
            bearer.indicationPending = false
            return .none
        default:
            // Unknown commands are ignored (§3.3.1); responses, notifications and
            // indications are the client's business. Any other request: not supported.
            if opcode & ATTOpcode.commandFlag != 0 || ATTRoute.toClient(opcode) { return .none }
            request.error(ATTError.requestNotSupported, 0, &response)
            return .none
        }
        return .none
    }

    // MARK: - Discovery (Vol 3 Part F §3.4.3, §3.4.4)
    // Sums and differences here wrap (&+, &-): they are of PDU lengths (≤ ATT_MTU)
    // and handles (1...65,535, never 0: `rangeError`), so they cannot overflow,
    // and each trap was a jump in the one specialised `receive` they inline into.

    /// Validates a handle range (§3.4.3.1): start 0 or start > end is Invalid Handle.
    static func rangeError(_ start: UInt16, _ end: UInt16) -> Bool { start == 0 || start > end }

    mutating func findInformation(_ request: ATTRequest, _ response: inout Capacity.ATTPDU) {
        guard request.pdu.count == 5 else { return request.error(ATTError.invalidPDU, 0, &response) }
        let start = readUInt16(request.pdu, 1), end = readUInt16(request.pdu, 3)
        guard !ATTServer.rangeError(start, end) else { return request.error(ATTError.invalidHandle, start, &response) }
        response.append(ATTOpcode.findInformationResponse)
        response.append(0)
        var format = 0
        var handle = start
        while handle <= end, Int(handle) <= database.count {
            let attribute = database.attributes[Int(handle) &- 1]
            let size = attribute.type.wireSize
            if format == 0 {
                format = size
                response[1] = size == 2 ? 1 : 2
            }
            if size != format || response.count &+ 2 &+ size > request.mtu { break }
            response.appendUInt16(handle)
            attribute.type.write(to: &response)
            if handle == UInt16.max { break }
            handle &+= 1
        }
        if format == 0 { request.error(ATTError.attributeNotFound, start, &response) }
    }

    mutating func findByTypeValue(_ request: ATTRequest, _ response: inout Capacity.ATTPDU) {
        let pdu = request.pdu
        guard pdu.count >= 7 else { return request.error(ATTError.invalidPDU, 0, &response) }
        let start = readUInt16(pdu, 1), end = readUInt16(pdu, 3)
        guard !ATTServer.rangeError(start, end) else { return request.error(ATTError.invalidHandle, start, &response) }
        let type = BLEUUID(uuid16: readUInt16(pdu, 5))
        let wanted = UnsafeRawBufferPointer(rebasing: pdu[7...])
        response.append(ATTOpcode.findByTypeValueResponse)
        var handle = start
        while handle <= end, Int(handle) <= database.count {
            let attribute = database.attributes[Int(handle) &- 1]
            if attribute.type == type, !attribute.dynamic, !attribute.isCCCD,
               database.staticValueEquals(handle, wanted) {
                if response.count &+ 4 > request.mtu { break }
                response.appendUInt16(handle)
                response.appendUInt16(attribute.isServiceDeclaration ? attribute.groupEnd : handle)
            }
            if handle == UInt16.max { break }
            handle &+= 1
        }
        if response.count == 1 { request.error(ATTError.attributeNotFound, start, &response) }
    }

    /// Parses start, end and a 2- or 16-byte UUID (Read By Type / Read By Group Type).
    static func parseTypedRange(_ pdu: UnsafeRawBufferPointer) -> (UInt16, UInt16, BLEUUID)? {
        guard pdu.count == 7 || pdu.count == 21,
              let type = BLEUUID(wire: UnsafeRawBufferPointer(rebasing: pdu[5...])) else { return nil }
        return (readUInt16(pdu, 1), readUInt16(pdu, 3), type)
    }

    mutating func readByType<D: GATTServerDelegate & ~Copyable>(
        _ request: ATTRequest, _ bearer: borrowing ATTBearer, _ delegate: inout D, _ response: inout Capacity.ATTPDU
    ) {
        guard let (start, end, type) = ATTServer.parseTypedRange(request.pdu) else {
            return request.error(ATTError.invalidPDU, 0, &response)
        }
        guard !ATTServer.rangeError(start, end) else { return request.error(ATTError.invalidHandle, start, &response) }
        response.append(ATTOpcode.readByTypeResponse)
        response.append(0)
        var entryLength = 0
        var handle = start
        var value = Capacity.AttributeValue()
        while handle <= end, Int(handle) <= database.count {
            defer { handle = handle == UInt16.max ? handle : handle &+ 1 }
            guard database.attributes[Int(handle) &- 1].type == type else { continue }
            let status = readValue(handle, request.connection, bearer, &delegate, &value)
            if status != 0 {
                // An error on the first match is the response; later ones end the list.
                if entryLength == 0 { return request.error(status, handle, &response) }
                break
            }
            // Each entry's value is cut to what fits: MTU - 4 and the 1-byte length field.
            let length = min(min(value.count, request.mtu &- 4), 253)
            if entryLength == 0 {
                entryLength = length &+ 2
                response[1] = UInt8(entryLength)
            } else if length &+ 2 != entryLength || response.count &+ entryLength > request.mtu {
                break
            }
            response.appendUInt16(handle)
            value.withBytes { response.append(UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
            if handle == end || handle == UInt16.max { break }
        }
        if entryLength == 0 { request.error(ATTError.attributeNotFound, start, &response) }
    }

    mutating func readByGroupType(_ request: ATTRequest, _ response: inout Capacity.ATTPDU) {
        guard let (start, end, type) = ATTServer.parseTypedRange(request.pdu) else {
            return request.error(ATTError.invalidPDU, 0, &response)
        }
        guard !ATTServer.rangeError(start, end) else { return request.error(ATTError.invalidHandle, start, &response) }
        guard type.uuid16 == GATTType.primaryService || type.uuid16 == GATTType.secondaryService else {
            return request.error(ATTError.unsupportedGroupType, start, &response)
        }
        response.append(ATTOpcode.readByGroupTypeResponse)
        response.append(0)
        var entryLength = 0
        var handle = start
        while handle <= end, Int(handle) <= database.count {
            let attribute = database.attributes[Int(handle) &- 1]
            if attribute.type == type {
                let length = database.staticValueLength(handle) &+ 4
                var fits = true
                if entryLength == 0 {
                    entryLength = length
                    response[1] = UInt8(length)
                } else if length != entryLength || response.count &+ length > request.mtu {
                    fits = false
                }
                if fits {
                    response.appendUInt16(handle)
                    response.appendUInt16(attribute.groupEnd)
                    database.appendStaticValue(handle, to: &response)
                }
                if !fits { break }
            }
            if handle == UInt16.max { break }
            handle &+= 1
        }
        if entryLength == 0 { request.error(ATTError.attributeNotFound, start, &response) }
    }

    // MARK: - Reading (§3.4.4)

    /// Reads an attribute value: static, CCCD (per bearer) or from the delegate;
    /// 0 or the error (Invalid Handle, Read Not Permitted, the delegate's).
    /// Out of line: three requests read values, each inlined the checks and the read.
    @inline(never) mutating func readValue<D: GATTServerDelegate & ~Copyable>(
        _ handle: UInt16, _ connection: UInt16, _ bearer: borrowing ATTBearer,
        _ delegate: inout D, _ value: inout Capacity.AttributeValue
    ) -> UInt8 {
        value.removeAll()
        guard let attribute = database.attribute(handle) else { return ATTError.invalidHandle }
        guard attribute.readable else { return ATTError.readNotPermitted }
        if attribute.isCCCD {
            value.appendUInt16(bearer.cccd[attribute.cccdIndex])
            return 0
        }
        if attribute.dynamic { return delegate.serverRead(connection: connection, attribute: handle, into: &value) }
        database.appendStaticValue(handle, to: &value)
        return 0
    }

    mutating func read<D: GATTServerDelegate & ~Copyable>(
        _ request: ATTRequest, _ bearer: borrowing ATTBearer, _ delegate: inout D, _ response: inout Capacity.ATTPDU
    ) {
        let isBlob = request.opcode == ATTOpcode.readBlobRequest
        guard request.pdu.count == (isBlob ? 5 : 3) else { return request.error(ATTError.invalidPDU, 0, &response) }
        let handle = readUInt16(request.pdu, 1)
        let offset = isBlob ? Int(readUInt16(request.pdu, 3)) : 0
        var value = Capacity.AttributeValue()
        let status = readValue(handle, request.connection, bearer, &delegate, &value)
        guard status == 0 else { return request.error(status, handle, &response) }
        guard offset <= value.count else { return request.error(ATTError.invalidOffset, handle, &response) }
        response.append(isBlob ? ATTOpcode.readBlobResponse : ATTOpcode.readResponse)
        let length = min(value.count &- offset, request.mtu &- 1)
        value.withBytes { response.append(UnsafeRawBufferPointer(rebasing: $0[offset..<(offset &+ length)])) }
    }

    mutating func readMultiple<D: GATTServerDelegate & ~Copyable>(
        _ request: ATTRequest, _ bearer: borrowing ATTBearer, _ delegate: inout D, _ response: inout Capacity.ATTPDU
    ) {
        let pdu = request.pdu
        // At least two handles (Vol 3 Part F §3.4.4.7).
        guard pdu.count >= 5, pdu.count % 2 == 1 else { return request.error(ATTError.invalidPDU, 0, &response) }
        response.append(ATTOpcode.readMultipleResponse)
        var value = Capacity.AttributeValue()
        var index = 1
        while index < pdu.count {
            let handle = readUInt16(pdu, index)
            index &+= 2
            let status = readValue(handle, request.connection, bearer, &delegate, &value)
            guard status == 0 else { return request.error(status, handle, &response) }
            let room = request.mtu &- response.count
            let length = min(value.count, max(0, room))
            value.withBytes { response.append(UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
        }
    }

    // MARK: - Writing (§3.4.5, §3.4.6)

    /// Applies a whole value to an attribute; returns 0 or an ATT error code.
    mutating func applyWrite<D: GATTServerDelegate & ~Copyable>(
        _ handle: UInt16, _ value: UnsafeRawBufferPointer, _ connection: UInt16, _ bearer: inout ATTBearer,
        _ delegate: inout D, _ note: inout ATTServerNote
    ) -> UInt8 {
        guard let attribute = database.attribute(handle) else { return ATTError.invalidHandle }
        guard attribute.writable else { return ATTError.writeNotPermitted }
        guard value.count <= ATT.maxValueLength else { return ATTError.invalidAttributeValueLength }
        if attribute.isCCCD {
            guard value.count == 2 else { return ATTError.invalidAttributeValueLength }
            let configuration = readUInt16(value, 0)
            var allowed: UInt16 = 0
            if attribute.properties.contains(.notify) { allowed |= 0x0001 }
            if attribute.properties.contains(.indicate) { allowed |= 0x0002 }
            guard configuration & ~allowed == 0 else { return ATTError.cccdImproperlyConfigured }
            bearer.cccd[attribute.cccdIndex] = configuration
            let valueHandle = handle - 1
            delegate.serverSubscriptionChanged(connection: connection, attribute: valueHandle, value: configuration)
            note = .subscription(attribute: valueHandle, value: configuration)
            return 0
        }
        guard attribute.dynamic else { return ATTError.writeNotPermitted }
        return delegate.serverWrite(connection: connection, attribute: handle, value: value)
    }

    mutating func write<D: GATTServerDelegate & ~Copyable>(
        _ request: ATTRequest, _ bearer: inout ATTBearer, _ delegate: inout D, _ response: inout Capacity.ATTPDU
    ) -> ATTServerNote {
        let isCommand = request.opcode == ATTOpcode.writeCommand
        var note = ATTServerNote.none
        guard request.pdu.count >= 3 else {
            if !isCommand { request.error(ATTError.invalidPDU, 0, &response) }
            return note
        }
        let handle = readUInt16(request.pdu, 1)
        if isCommand {
            // Write Without Response: no response, errors are silent (§3.4.5.3).
            guard let attribute = database.attribute(handle), attribute.writableWithoutResponse else { return note }
        }
        let value = UnsafeRawBufferPointer(rebasing: request.pdu[3...])
        let status = applyWrite(handle, value, request.connection, &bearer, &delegate, &note)
        if isCommand { return note }
        if status != 0 {
            request.error(status, handle, &response)
        } else {
            response.append(ATTOpcode.writeResponse)
        }
        return note
    }

    mutating func prepareWrite(_ request: ATTRequest, _ bearer: inout ATTBearer, _ response: inout Capacity.ATTPDU) {
        let pdu = request.pdu
        guard pdu.count >= 5 else { return request.error(ATTError.invalidPDU, 0, &response) }
        let handle = readUInt16(pdu, 1)
        guard let attribute = database.attribute(handle) else {
            return request.error(ATTError.invalidHandle, handle, &response)
        }
        guard attribute.writable else { return request.error(ATTError.writeNotPermitted, handle, &response) }
        let value = UnsafeRawBufferPointer(rebasing: pdu[5...])
        guard bearer.prepareQueue.append(handle: handle, offset: readUInt16(pdu, 3), value: value) else {
            return request.error(ATTError.prepareQueueFull, handle, &response)
        }
        // The response echoes handle, offset and value (§3.4.6.2).
        response.append(ATTOpcode.prepareWriteResponse)
        response.append(UnsafeRawBufferPointer(rebasing: pdu[1...]))
    }

    mutating func executeWrite<D: GATTServerDelegate & ~Copyable>(
        _ request: ATTRequest, _ bearer: inout ATTBearer, _ delegate: inout D, _ response: inout Capacity.ATTPDU
    ) -> ATTServerNote {
        var note = ATTServerNote.none
        guard request.pdu.count == 2, request.pdu[1] <= 1 else {
            request.error(ATTError.invalidPDU, 0, &response)
            return note
        }
        defer { bearer.prepareQueue.clear() }
        if request.pdu[1] == 1 {
            // Each attribute's parts are assembled in queue order; the first error
            // aborts the rest (§3.4.6.3). The queue is read in place, and only
            // between writes (which never touch it).
            var entry = 0
            while entry < bearer.prepareQueue.count {
                let handle = bearer.prepareQueue.handles[entry]
                var seenBefore = false
                var earlier = 0
                while earlier < entry {
                    if bearer.prepareQueue.handles[earlier] == handle { seenBefore = true }
                    earlier &+= 1
                }
                if !seenBefore {
                    var value = Capacity.AttributeValue()
                    var status: UInt8 = 0
                    var part = entry
                    while part < bearer.prepareQueue.count, status == 0 {
                        if bearer.prepareQueue.handles[part] == handle {
                            status = bearer.prepareQueue.place(part, into: &value)
                        }
                        part &+= 1
                    }
                    if status == 0 {
                        status = value.withBytes { applyWrite(handle, $0, request.connection, &bearer, &delegate, &note) }
                    }
                    if status != 0 {
                        request.error(status, handle, &response)
                        return note
                    }
                }
                entry &+= 1
            }
        }
        response.append(ATTOpcode.executeWriteResponse)
        return note
    }
}

func valuesEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    guard a.count == b.count else { return false }
    for i in 0..<a.count where a[i] != b[i] { return false }
    return true
}
