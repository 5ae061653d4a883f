/// LE signaling channel codes (Core Vol 3 Part A §4).
public enum L2CAPSignalCode {
    public static let commandReject: UInt8 = 0x01
    public static let disconnectionRequest: UInt8 = 0x06
    public static let connectionParameterUpdateRequest: UInt8 = 0x12
    public static let connectionParameterUpdateResponse: UInt8 = 0x13
    public static let leCreditBasedConnectionRequest: UInt8 = 0x14
    public static let leCreditBasedConnectionResponse: UInt8 = 0x15
    public static let flowControlCredit: UInt8 = 0x16
    public static let creditBasedConnectionRequest: UInt8 = 0x17
}

/// Connection parameters in HCI units (interval 1.25 ms, timeout 10 ms).
public struct ConnectionParameters: Equatable {
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var latency: UInt16
    public var timeout: UInt16

    public init(intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, timeout: UInt16) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.latency = latency
        self.timeout = timeout
    }

    /// The ranges of Core Vol 4 Part E §7.8.12 plus the rule that the supervision
    /// timeout exceeds (1 + latency) * interval_max * 2.
    public var isValid: Bool {
        guard intervalMin >= 6, intervalMax <= 3200, intervalMin <= intervalMax,
              latency <= 499, timeout >= 10, timeout <= 3200 else { return false }
        return UInt32(timeout) * 4 > (1 + UInt32(latency)) * UInt32(intervalMax)
    }
}

/// What a signaling PDU asks of the host beyond its response.
public enum L2CAPSignalNote: Equatable {
    case none
    /// A peripheral asked (as central we accepted it): apply with LE Connection Update.
    case updateConnection(ConnectionParameters)
    /// The central answered our Connection Parameter Update Request.
    case updateAnswered(identifier: UInt8, accepted: Bool)
}

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
