/// ATT opcodes (Core Vol 3 Part F §3.4.8).
public enum ATTOpcode {
    public static let errorResponse: UInt8 = 0x01
    public static let exchangeMTURequest: UInt8 = 0x02
    public static let exchangeMTUResponse: UInt8 = 0x03
    public static let findInformationRequest: UInt8 = 0x04
    public static let findInformationResponse: UInt8 = 0x05
    public static let findByTypeValueRequest: UInt8 = 0x06
    public static let findByTypeValueResponse: UInt8 = 0x07
    public static let readByTypeRequest: UInt8 = 0x08
    public static let readByTypeResponse: UInt8 = 0x09
    public static let readRequest: UInt8 = 0x0A
    public static let readResponse: UInt8 = 0x0B
    public static let readBlobRequest: UInt8 = 0x0C
    public static let readBlobResponse: UInt8 = 0x0D
    public static let readMultipleRequest: UInt8 = 0x0E
    public static let readMultipleResponse: UInt8 = 0x0F
    public static let readByGroupTypeRequest: UInt8 = 0x10
    public static let readByGroupTypeResponse: UInt8 = 0x11
    public static let writeRequest: UInt8 = 0x12
    public static let writeResponse: UInt8 = 0x13
    public static let prepareWriteRequest: UInt8 = 0x16
    public static let prepareWriteResponse: UInt8 = 0x17
    public static let executeWriteRequest: UInt8 = 0x18
    public static let executeWriteResponse: UInt8 = 0x19
    public static let handleValueNotification: UInt8 = 0x1B
    public static let handleValueIndication: UInt8 = 0x1D
    public static let handleValueConfirmation: UInt8 = 0x1E
    public static let readMultipleVariableResponse: UInt8 = 0x21
    public static let multipleHandleValueNotification: UInt8 = 0x23
    public static let writeCommand: UInt8 = 0x52
    public static let signedWriteCommand: UInt8 = 0xD2

    /// Bit 6 of the opcode marks a command: no response, unknown ones are ignored (§3.3.1).
    public static let commandFlag: UInt8 = 0x40
}

/// Where a received ATT PDU goes, by one table (as NimBLE's opcode table):
/// what a server sends (the Error Response, responses, notifications,
/// indications) to our GATT client; everything else (requests, commands, the
/// confirmation, unknown opcodes) to our server.
public enum ATTRoute {
    /// The table: the opcodes a server sends. 0x15 is reserved but has a
    /// response's form (odd, among the responses) and has always been taken as one.
    @inline(__always)
    public static func toClient(_ opcode: UInt8) -> Bool {
        switch opcode {
        case ATTOpcode.errorResponse, ATTOpcode.exchangeMTUResponse, ATTOpcode.findInformationResponse,
             ATTOpcode.findByTypeValueResponse, ATTOpcode.readByTypeResponse, ATTOpcode.readResponse,
             ATTOpcode.readBlobResponse, ATTOpcode.readMultipleResponse, ATTOpcode.readByGroupTypeResponse,
             ATTOpcode.writeResponse, 0x15, ATTOpcode.prepareWriteResponse, ATTOpcode.executeWriteResponse,
             ATTOpcode.handleValueNotification, ATTOpcode.handleValueIndication,
             ATTOpcode.readMultipleVariableResponse, ATTOpcode.multipleHandleValueNotification:
            true
        default:
            false
        }
    }

    /// Client PDUs the server answers: every request, known or not; not
    /// commands (the Command Flag, §3.3.1) nor the Handle Value Confirmation.
    @inline(__always)
    public static func expectsResponse(_ opcode: UInt8) -> Bool {
        opcode & ATTOpcode.commandFlag == 0 && !toClient(opcode) && opcode != ATTOpcode.handleValueConfirmation
    }
}

/// ATT error codes (Core Vol 3 Part F §3.4.1.1).
public enum ATTError {
    public static let invalidHandle: UInt8 = 0x01
    public static let readNotPermitted: UInt8 = 0x02
    public static let writeNotPermitted: UInt8 = 0x03
    public static let invalidPDU: UInt8 = 0x04
    public static let insufficientAuthentication: UInt8 = 0x05
    public static let requestNotSupported: UInt8 = 0x06
    public static let invalidOffset: UInt8 = 0x07
    public static let prepareQueueFull: UInt8 = 0x09
    public static let attributeNotFound: UInt8 = 0x0A
    public static let attributeNotLong: UInt8 = 0x0B
    public static let invalidAttributeValueLength: UInt8 = 0x0D
    public static let unlikelyError: UInt8 = 0x0E
    public static let unsupportedGroupType: UInt8 = 0x10
    public static let valueNotAllowed: UInt8 = 0x13
    /// Common profile error (Core Supplement Part B §1.2): CCCD improperly configured.
    public static let cccdImproperlyConfigured: UInt8 = 0xFD
}

/// ATT constants.
public enum ATT {
    /// LE default ATT_MTU (Vol 3 Part F §3.2.8).
    public static let defaultMTU: UInt16 = 23
    /// The MTU our server offers and our client asks for: the largest that a
    /// 251-byte LE data PDU carries in one packet (251 - 4 bytes L2CAP header).
    public static let maxMTU: UInt16 = 247
    /// Longest attribute value (Vol 3 Part F §3.2.9).
    public static let maxValueLength = 512
    /// ATT transaction timeout (Vol 3 Part F §3.3.3), milliseconds.
    public static let transactionTimeout: UInt64 = 30_000
}

/// GATT attribute types (Core Vol 3 Part G §3).
public enum GATTType {
    public static let primaryService: UInt16 = 0x2800
    public static let secondaryService: UInt16 = 0x2801
    public static let include: UInt16 = 0x2802
    public static let characteristic: UInt16 = 0x2803
    public static let clientCharacteristicConfiguration: UInt16 = 0x2902
    public static let gapService: UInt16 = 0x1800
    public static let gattService: UInt16 = 0x1801
    public static let deviceName: UInt16 = 0x2A00
    public static let appearance: UInt16 = 0x2A01
    public static let serviceChanged: UInt16 = 0x2A05
}

/// Characteristic properties (Core Vol 3 Part G §3.3.1.1).
public struct CharacteristicProperties: Equatable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let read = CharacteristicProperties(rawValue: 0x02)
    public static let writeWithoutResponse = CharacteristicProperties(rawValue: 0x04)
    public static let write = CharacteristicProperties(rawValue: 0x08)
    public static let notify = CharacteristicProperties(rawValue: 0x10)
    public static let indicate = CharacteristicProperties(rawValue: 0x20)

    public func contains(_ other: CharacteristicProperties) -> Bool { rawValue & other.rawValue == other.rawValue }
    public func union(_ other: CharacteristicProperties) -> CharacteristicProperties {
        CharacteristicProperties(rawValue: rawValue | other.rawValue)
    }
}
