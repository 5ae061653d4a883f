/// The LE signaling channel: we support only the connection parameter update
/// procedure (as central, and its request as peripheral); every other request
/// is refused as the spec says, and no response is ever answered (§4.1).
public enum L2CAPSignaling {
    /// Handles one C-frame; the response (a whole signaling payload) is left in `response`.
    public static func receive<let n: Int>(
        _ pdu: UnsafeRawBufferPointer, isCentral: Bool, response: inout FixedBytes<n>
    ) -> L2CAPSignalNote {
        response.removeAll()
        // One command per C-frame on LE (§4): code, identifier, length, data.
        guard pdu.count >= 4 else { return .none }
        let code = pdu[0], identifier = pdu[1]
        let length = Int(readUInt16(pdu, 2))
        // Identifier 0 is invalid: silently discard (§4).
        guard identifier != 0 else { return .none }
        // A response is never answered, not even a malformed one (§4.1).
        if isResponse(code) { return responseReceived(pdu) }
        guard pdu.count - 4 == length else {
            reject(identifier, &response)
            return .none
        }
        switch code {
        case L2CAPSignalCode.connectionParameterUpdateRequest:
            // Only the central may receive it (§4.20); a peripheral rejects it.
            guard isCentral, length == 8 else {
                reject(identifier, &response)
                return .none
            }
            let parameters = ConnectionParameters(
                intervalMin: readUInt16(pdu, 4), intervalMax: readUInt16(pdu, 6),
                latency: readUInt16(pdu, 8), timeout: readUInt16(pdu, 10))
            let accepted = parameters.isValid
            header(L2CAPSignalCode.connectionParameterUpdateResponse, identifier, 2, &response)
            response.appendUInt16(accepted ? 0x0000 : 0x0001)
            return accepted ? .updateConnection(parameters) : .none
        case L2CAPSignalCode.leCreditBasedConnectionRequest:
            guard length == 10 else {
                reject(identifier, &response)
                return .none
            }
            // No dynamic channels: "LE_PSM not supported" (result 0x0002, §4.23).
            header(L2CAPSignalCode.leCreditBasedConnectionResponse, identifier, 10, &response)
            response.appendZeros(8)
            response.appendUInt16(0x0002)
            return .none
        default:
            reject(identifier, &response)
            return .none
        }
    }

    /// The response codes of Core Vol 3 Part A §4 Table 4.2 (BR/EDR's among
    /// them): "L2CAP_COMMAND_REJECT_RSP packets shall not be sent in response
    /// to an identified response packet" (§4.1), so a response that is
    /// malformed, unsolicited or not for LE is dropped without a word.
    public static func isResponse(_ code: UInt8) -> Bool {
        switch code {
        case L2CAPSignalCode.commandReject, 0x03, 0x05, L2CAPSignalCode.disconnectionResponse, 0x09, 0x0B,
             L2CAPSignalCode.connectionParameterUpdateResponse, L2CAPSignalCode.leCreditBasedConnectionResponse,
             L2CAPSignalCode.creditBasedConnectionResponse, L2CAPSignalCode.creditBasedReconfigureResponse:
            true
        default:
            false
        }
    }

    /// A response from the peer (`isResponse`): what it tells of our request;
    /// nothing is ever sent back. Our only request is the Connection Parameter
    /// Update Request (its identifier is checked by the host: an answer to
    /// nothing we asked changes nothing).
    public static func responseReceived(_ pdu: UnsafeRawBufferPointer) -> L2CAPSignalNote {
        guard pdu.count >= 4, pdu[1] != 0, pdu.count - 4 == Int(readUInt16(pdu, 2)) else { return .none }
        let identifier = pdu[1]
        switch pdu[0] {
        case L2CAPSignalCode.connectionParameterUpdateResponse:
            // Result 0x0000 accepted, 0x0001 rejected (§4.21).
            guard pdu.count == 6 else { return .none }
            return .updateAnswered(identifier: identifier, accepted: readUInt16(pdu, 4) == 0)
        case L2CAPSignalCode.commandReject:
            // Our request not understood: as good as refused. A reason (2 octets) at least (§4.1).
            guard pdu.count >= 6 else { return .none }
            return .updateAnswered(identifier: identifier, accepted: false)
        default:
            return .none  // a response to a request we never send
        }
    }

    static func header<let n: Int>(_ code: UInt8, _ identifier: UInt8, _ length: UInt16, _ response: inout FixedBytes<n>) {
        response.append(code)
        response.append(identifier)
        response.appendUInt16(length)
    }

    /// Command Reject, reason 0x0000 "Command not understood" (§4.1).
    static func reject<let n: Int>(_ identifier: UInt8, _ response: inout FixedBytes<n>) {
        response.removeAll()
        header(L2CAPSignalCode.commandReject, identifier, 2, &response)
        response.appendUInt16(0x0000)
    }

    /// A Connection Parameter Update Request (peripheral → central).
    public static func updateRequest<let n: Int>(
        _ parameters: ConnectionParameters, identifier: UInt8, into response: inout FixedBytes<n>
    ) {
        response.removeAll()
        header(L2CAPSignalCode.connectionParameterUpdateRequest, identifier, 8, &response)
        response.appendUInt16(parameters.intervalMin)
        response.appendUInt16(parameters.intervalMax)
        response.appendUInt16(parameters.latency)
        response.appendUInt16(parameters.timeout)
    }
}
