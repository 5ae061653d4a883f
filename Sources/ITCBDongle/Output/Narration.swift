import BLEHost

// --log-level debug narrates the protocol: each ATT PDU by name with its
// handle, on which link and in which direction (Core Vol 3 Part F §3.4).
// Trace adds the bytes of every HCI packet; neither prints Swift type dumps.

/// ATT opcode names (Vol 3 Part F §3.4.8).
func attOpcodeName(_ opcode: UInt8) -> String {
    tableName(attOpcodeTable, UInt16(opcode)) ?? built("ATT opcode 0x\(hexByte: opcode)")
}

private let attOpcodeTable: StaticString = """
01 Error Response
02 Exchange MTU Request
03 Exchange MTU Response
04 Find Information Request
05 Find Information Response
06 Find By Type Value Request
07 Find By Type Value Response
08 Read By Type Request
09 Read By Type Response
0A Read Request
0B Read Response
0C Read Blob Request
0D Read Blob Response
0E Read Multiple Request
0F Read Multiple Response
10 Read By Group Type Request
11 Read By Group Type Response
12 Write Request
13 Write Response
16 Prepare Write Request
17 Prepare Write Response
18 Execute Write Request
19 Execute Write Response
1B Handle Value Notification
1D Handle Value Indication
1E Handle Value Confirmation
52 Write Command
D2 Signed Write Command
"""

/// "ATT < Write Request, handle 0x000c, 13 bytes of value, link 0x0040" for the
/// first fragment of an ACL packet carrying ATT; nil for anything else.
/// `packet` is the ACL packet without its H4 indicator.
/// Built as the log takes it (no String made per line).
func attNarration(_ packet: UnsafeRawBufferPointer, outgoing: Bool) -> BuiltText? {
    // ACL header (handle, PB flags, length), then the L2CAP basic header.
    guard packet.count >= 9 else { return nil }
    let header = UInt16(packet[0]) | UInt16(packet[1]) << 8
    guard (header >> 12) & 0x3 != 0b01 else { return nil }  // a continuation fragment
    let channel = UInt16(packet[6]) | UInt16(packet[7]) << 8
    guard channel == L2CAPChannel.att else { return nil }
    let opcode = packet[8]
    let pdu = UnsafeRawBufferPointer(rebasing: packet[8...])
    // Built as bytes in one builder: each `text.append("…")` made a BuiltText of its own.
    var text = BuiltText.Builder()
    text.appendLiteral(outgoing ? "ATT > " : "ATT < ")
    text.appendInterpolation(attOpcodeName(opcode))
    switch opcode {
    case ATTOpcode.errorResponse where pdu.count >= 5:
        text.appendLiteral(" to ")
        text.appendInterpolation(attOpcodeName(pdu[1]))
        text.appendLiteral(", handle 0x")
        text.appendInterpolation(hex4: UInt16(pdu[2]) | UInt16(pdu[3]) << 8)
        text.appendLiteral(", error 0x")
        text.appendInterpolation(hexByte: pdu[4])
    case ATTOpcode.exchangeMTURequest where pdu.count >= 3, ATTOpcode.exchangeMTUResponse where pdu.count >= 3:
        text.appendLiteral(", MTU ")
        text.appendInterpolation(Int(UInt16(pdu[1]) | UInt16(pdu[2]) << 8))
    case ATTOpcode.readRequest, ATTOpcode.readBlobRequest, ATTOpcode.writeRequest, ATTOpcode.writeCommand,
         ATTOpcode.prepareWriteRequest, ATTOpcode.handleValueNotification, ATTOpcode.handleValueIndication:
        guard pdu.count >= 3 else { break }
        text.appendLiteral(", handle 0x")
        text.appendInterpolation(hex4: UInt16(pdu[1]) | UInt16(pdu[2]) << 8)
        if opcode != ATTOpcode.readRequest, opcode != ATTOpcode.readBlobRequest { byteCount(pdu.count - 3, into: &text) }
    default:
        byteCount(pdu.count - 1, into: &text)
    }
    text.appendLiteral(", link 0x")
    text.appendInterpolation(hex4: header & 0x0FFF)
    return BuiltText(text)
}

/// `, N byte(s)`.
private func byteCount(_ count: Int, into text: inout BuiltText.Builder) {
    text.appendLiteral(", ")
    text.appendInterpolation(count)
    text.appendLiteral(" byte(s)")
}

/// A GATT client event in words, for trace logs (built as bytes: a String per case cost a conversion each).
func describe(_ event: GATTClientEvent) -> BuiltText {
    switch event {
    case .mtuExchanged(let connection, let mtu): "MTU \(mtu) on 0x\(hex4: connection)"
    case .serviceDiscovered(let connection, let start, let end): "service found on 0x\(hex4: connection): handles 0x\(hex4: start)–0x\(hex4: end)"
    case .serviceNotFound(let connection): "service not found on 0x\(hex4: connection)"
    case .characteristicsDiscovered(let connection, let count): "\(count) characteristic(s) on 0x\(hex4: connection)"
    case .descriptorsDiscovered(let connection, let count): "\(count) descriptor(s) on 0x\(hex4: connection)"
    case .writeCompleted(let connection, let handle): "write to 0x\(hex4: handle) done on 0x\(hex4: connection)"
    case .readCompleted(let connection, let handle): "read of 0x\(hex4: handle) done on 0x\(hex4: connection)"
    case .error(let connection, let request, let handle, let code):
        "\(attOpcodeName(request)) for 0x\(hex4: handle) failed with ATT error 0x\(hexByte: code) on 0x\(hex4: connection)"
    case .timeout(let connection, let request): "\(attOpcodeName(request)) timed out on 0x\(hex4: connection)"
    case .unexpectedResponse(let connection, let opcode): "unexpected \(attOpcodeName(opcode)) on 0x\(hex4: connection)"
    }
}

