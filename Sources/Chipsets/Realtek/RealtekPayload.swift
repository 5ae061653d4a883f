import BLEHost

/// The bytes to download: up to `maxSegments` ranges of the file in order
/// (v1: one patch, v2: the selected sub-sections by priority), then an
/// optional 4-byte little-endian trailer (v1: the file's firmware version
/// replaces the patch's last 4 bytes), then the config file.
public struct RealtekPayload {
    public static let maxSegments = 8
    var segmentStart: InlineArray<8, Int> = InlineArray(repeating: 0)
    var segmentLength: InlineArray<8, Int> = InlineArray(repeating: 0)
    public private(set) var segmentCount = 0
    public var hasTrailer = false
    public var trailer: UInt32 = 0
    public var configLength = 0
    public var firmwareVersion: UInt32 = 0
    public var projectID: UInt8 = 0

    public init() {}

    /// File offset of the first range.
    public var start: Int { segmentCount > 0 ? segmentStart[0] : 0 }
    /// The file's bytes in the payload (all ranges).
    public var bodyLength: Int {
        var total = 0
        for i in 0..<segmentCount { total += segmentLength[i] }
        return total
    }
    public var patchLength: Int { bodyLength + (hasTrailer ? 4 : 0) }
    public var totalLength: Int { patchLength + configLength }

    public func segment(_ i: Int) -> (start: Int, length: Int) { (segmentStart[i], segmentLength[i]) }

    /// Appends a range; false when all slots are taken.
    mutating func append(start: Int, length: Int) -> Bool {
        insert(start: start, length: length, at: segmentCount)
    }

    mutating func insert(start: Int, length: Int, at index: Int) -> Bool {
        guard segmentCount < Self.maxSegments else { return false }
        var i = segmentCount
        while i > index {
            segmentStart[i] = segmentStart[i - 1]
            segmentLength[i] = segmentLength[i - 1]
            i -= 1
        }
        segmentStart[index] = start
        segmentLength[index] = length
        segmentCount += 1
        return true
    }

    /// Byte `index` of the concatenated payload.
    public func byte(at index: Int, file: UnsafeRawBufferPointer, config: UnsafeRawBufferPointer) -> UInt8 {
        var i = index
        for s in 0..<segmentCount {
            if i < segmentLength[s] { return file[segmentStart[s] + i] }
            i -= segmentLength[s]
        }
        if hasTrailer {
            if i < 4 { return UInt8(truncatingIfNeeded: trailer >> UInt32(8 * i)) }
            i -= 4
        }
        return config[i]
    }
}
