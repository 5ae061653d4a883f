import BLEHost

// --log-level debug narrates the protocol: each ATT PDU by name with its
// handle, on which link and in which direction (Core Vol 3 Part F §3.4).
// Trace adds the bytes of every HCI packet; neither prints Swift type dumps.

/// ATT opcode names (Vol 3 Part F §3.4.8).
func attOpcodeName(_ opcode: UInt8) -> String {
    switch opcode {
    case 0x01: "Error Response"
    case 0x02: "Exchange MTU Request"
    case 0x03: "Exchange MTU Response"
    case 0x04: "Find Information Request"
    case 0x05: "Find Information Response"
    case 0x06: "Find By Type Value Request"
    case 0x07: "Find By Type Value Response"
    case 0x08: "Read By Type Request"
    case 0x09: "Read By Type Response"
    case 0x0A: "Read Request"
    case 0x0B: "Read Response"
    case 0x0C: "Read Blob Request"
    case 0x0D: "Read Blob Response"
    case 0x0E: "Read Multiple Request"
    case 0x0F: "Read Multiple Response"
    case 0x10: "Read By Group Type Request"
    case 0x11: "Read By Group Type Response"
    case 0x12: "Write Request"
    case 0x13: "Write Response"
    case 0x16: "Prepare Write Request"
    case 0x17: "Prepare Write Response"
    case 0x18: "Execute Write Request"
    case 0x19: "Execute Write Response"
    case 0x1B: "Handle Value Notification"
    case 0x1D: "Handle Value Indication"
    case 0x1E: "Handle Value Confirmation"
    case 0x52: "Write Command"
    case 0xD2: "Signed Write Command"
    default: "ATT opcode 0x\(hex(opcode))"
    }
}

/// "ATT < Write Request, handle 0x000c, 13 bytes of value, link 0x0040" for the
/// first fragment of an ACL packet carrying ATT; nil for anything else.
/// `packet` is the ACL packet without its H4 indicator.
func attNarration(_ packet: UnsafeRawBufferPointer, outgoing: Bool) -> String? {
    // ACL header (handle, PB flags, length), then the L2CAP basic header.
    guard packet.count >= 9 else { return nil }
    let header = UInt16(packet[0]) | UInt16(packet[1]) << 8
    guard (header >> 12) & 0x3 != 0b01 else { return nil }  // a continuation fragment
    let channel = UInt16(packet[6]) | UInt16(packet[7]) << 8
    guard channel == L2CAPChannel.att else { return nil }
    let opcode = packet[8]
    let pdu = UnsafeRawBufferPointer(rebasing: packet[8...])
    // Built as bytes (BuiltText): String appends are inlined at every use.
    var text: BuiltText = outgoing ? "ATT > " : "ATT < "
    text.append("\(attOpcodeName(opcode))")
    switch opcode {
    case ATTOpcode.errorResponse where pdu.count >= 5:
        text.append(" to \(attOpcodeName(pdu[1])), handle 0x\(hex4(UInt16(pdu[2]) | UInt16(pdu[3]) << 8)), error 0x\(hex(pdu[4]))")
    case ATTOpcode.exchangeMTURequest where pdu.count >= 3, ATTOpcode.exchangeMTUResponse where pdu.count >= 3:
        text.append(", MTU \(UInt16(pdu[1]) | UInt16(pdu[2]) << 8)")
    case ATTOpcode.readRequest, ATTOpcode.readBlobRequest, ATTOpcode.writeRequest, ATTOpcode.writeCommand,
         ATTOpcode.prepareWriteRequest, ATTOpcode.handleValueNotification, ATTOpcode.handleValueIndication:
        guard pdu.count >= 3 else { break }
        text.append(", handle 0x\(hex4(UInt16(pdu[1]) | UInt16(pdu[2]) << 8))")
        if opcode != ATTOpcode.readRequest, opcode != ATTOpcode.readBlobRequest { text.append(", \(pdu.count - 3) byte(s)") }
    default:
        text.append(", \(pdu.count - 1) byte(s)")
    }
    text.append(", link 0x\(hex4(header & 0x0FFF))")
    return text.string
}

/// A GATT client event in words, for trace logs.
func describe(_ event: GATTClientEvent) -> String {
    switch event {
    case .mtuExchanged(let connection, let mtu): "MTU \(mtu) on 0x\(hex4(connection))"
    case .serviceDiscovered(let connection, let start, let end): "service found on 0x\(hex4(connection)): handles 0x\(hex4(start))–0x\(hex4(end))"
    case .serviceNotFound(let connection): "service not found on 0x\(hex4(connection))"
    case .characteristicsDiscovered(let connection, let count): "\(count) characteristic(s) on 0x\(hex4(connection))"
    case .descriptorsDiscovered(let connection, let count): "\(count) descriptor(s) on 0x\(hex4(connection))"
    case .writeCompleted(let connection, let handle): "write to 0x\(hex4(handle)) done on 0x\(hex4(connection))"
    case .readCompleted(let connection, let handle): "read of 0x\(hex4(handle)) done on 0x\(hex4(connection))"
    case .error(let connection, let request, let handle, let code):
        "\(attOpcodeName(request)) for 0x\(hex4(handle)) failed with ATT error 0x\(hex(code)) on 0x\(hex4(connection))"
    case .timeout(let connection, let request): "\(attOpcodeName(request)) timed out on 0x\(hex4(connection))"
    case .unexpectedResponse(let connection, let opcode): "unexpected \(attOpcodeName(opcode)) on 0x\(hex4(connection))"
    }
}

