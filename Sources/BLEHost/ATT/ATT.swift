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
