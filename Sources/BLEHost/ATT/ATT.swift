/// ATT constants.
public enum ATT {
    /// LE default ATT_MTU (Vol 3 Part F §3.2.8).
    public static let defaultMTU: UInt16 = 23
    /// The MTU our server offers and our client asks for, a build capacity
    /// (`Capacity.attMTU`): 517 on Linux (a 512-byte value in one Write
    /// Request), 247 on the MCU firmware (one 251-byte LE data PDU).
    public static var maxMTU: UInt16 { Capacity.attMTU }
    /// Longest attribute value (Vol 3 Part F §3.2.9).
    public static let maxValueLength = 512
    /// ATT transaction timeout (Vol 3 Part F §3.3.3), milliseconds.
    public static let transactionTimeout: UInt64 = 30_000
}
