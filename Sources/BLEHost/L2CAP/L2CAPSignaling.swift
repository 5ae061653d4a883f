/// The LE signaling channel: we support only the connection parameter update
/// procedure (as central); everything else is refused as the spec says.
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
        guard pdu.count - 4 == length else {
            reject(identifier, &response)
            return .none
        }
        switch code {
        case L2CAPSignalCode.connectionParameterUpdateResponse:
            // Result 0x0000 accepted, 0x0001 rejected (§4.21).
            guard length == 2 else { return .none }
            return .updateAnswered(identifier: identifier, accepted: readUInt16(pdu, 4) == 0)
        case L2CAPSignalCode.commandReject:
            // Our request not understood: as good as refused.
            return .updateAnswered(identifier: identifier, accepted: false)
        case L2CAPSignalCode.leCreditBasedConnectionResponse:
            return .none  // a response to a request we never send
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
