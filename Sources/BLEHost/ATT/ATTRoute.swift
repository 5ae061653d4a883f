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
