import BLEHost

/// A vendor control request on endpoint 0 (USB 2.0 §9.3): the setup packet's
/// fields, and for an OUT request the 4 bytes it writes.
public struct USBControlRequest: Equatable, Sendable {
    public var requestType: UInt8
    public var request: UInt8
    public var value: UInt16
    public var index: UInt16
    public var length: UInt16
    public var data: UInt32

    public var isIn: Bool { requestType & 0x80 != 0 }

    /// The 8-byte setup packet, then the data of an OUT request.
    public func write(into buffer: UnsafeMutablePointer<UInt8>) -> Int {
        buffer[0] = requestType
        buffer[1] = request
        func put(_ word: UInt16, at i: Int) {
            buffer[i] = UInt8(truncatingIfNeeded: word)
            buffer[i + 1] = UInt8(truncatingIfNeeded: word >> 8)
        }
        put(value, at: 2)
        put(index, at: 4)
        put(length, at: 6)
        guard !isIn else { return 8 }
        for i in 0..<4 { buffer[8 + i] = UInt8(truncatingIfNeeded: data >> (8 * UInt32(i))) }
        return 12
    }
}
