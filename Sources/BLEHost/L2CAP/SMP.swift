/// Security Manager (Core Vol 3 Part H): pairing is not supported, so every
/// pairing or security request is answered with Pairing Failed (0x05), reason
/// Pairing Not Supported (0x05) (§3.5.5).
public enum SMP {
    public static let pairingFailed: UInt8 = 0x05
    public static let reasonPairingNotSupported: UInt8 = 0x05

    /// Fills `response` with Pairing Failed unless the PDU is empty or itself a Pairing Failed.
    public static func receive<let n: Int>(_ pdu: UnsafeRawBufferPointer, response: inout FixedBytes<n>) {
        response.removeAll()
        guard let code = pdu.first, code != pairingFailed else { return }
        response.append(pairingFailed)
        response.append(reasonPairingNotSupported)
    }
}
