import BLEHost

/// What `.needFiles` asks for: the firmware's candidate names in the order
/// they are tried (the first that exists is read, as Linux tries them) and an
/// optional companion.
public struct FileRequest {
    /// The first candidate.
    public var firmware: Capacity.ChipsetText
    /// The other candidates, in order, each ended by a NUL (`addAlternative`).
    public private(set) var alternatives: Capacity.FileAlternatives
    public var companion: Capacity.ChipsetText
    public var companionRequired: Bool
    /// No firmware file found: the chipset goes on without one (from ROM).
    public var optional: Bool
    public init() {
        firmware = FixedBytes()
        alternatives = FixedBytes()
        companion = FixedBytes()
        companionRequired = false
        optional = false
    }

    /// Empty again, in place.
    public mutating func removeAll() {
        firmware.removeAll()
        alternatives.removeAll()
        companion.removeAll()
        companionRequired = false
        optional = false
    }

    /// One more candidate, tried after those given so far: the first one when none is given yet.
    public mutating func addCandidate(_ write: (inout Capacity.ChipsetText) -> Void) {
        if firmware.isEmpty {
            write(&firmware)
            return
        }
        var name = Capacity.ChipsetText()
        write(&name)
        // A name that does not fit whole is left out rather than cut.
        guard name.count + 1 <= alternatives.freeSpace else { return }
        _ = alternatives.append(contentsOf: name)
        _ = alternatives.append(0)
    }

    /// Every candidate in order, the first one first.
    public func forEachCandidate(_ body: (UnsafeRawBufferPointer) -> Void) {
        if !firmware.isEmpty { firmware.withBytes(body) }
        alternatives.withBytes { all in
            var start = 0
            for index in 0..<all.count where all[index] == 0 {
                body(UnsafeRawBufferPointer(rebasing: all[start..<index]))
                start = index + 1
            }
        }
    }
}
