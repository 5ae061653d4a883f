/// One request being answered: its bytes and the bearer's MTU.
struct ATTRequest {
    let pdu: UnsafeRawBufferPointer
    let connection: UInt16
    let mtu: Int
    var opcode: UInt8 { pdu[0] }

    init(pdu: UnsafeRawBufferPointer, connection: UInt16, mtu: Int) {
        self.pdu = pdu
        self.connection = connection
        self.mtu = mtu
    }

    /// Replaces the response with an Error Response (§3.4.1.1). Out of line: the
    /// server's handlers answer errors from some 30 places.
    @inline(never) func error(_ code: UInt8, _ handle: UInt16, _ response: inout Capacity.ATTPDU) {
        response.removeAll()
        response.append(ATTOpcode.errorResponse)
        response.append(opcode)
        response.appendUInt16(handle)
        response.append(code)
    }
}
