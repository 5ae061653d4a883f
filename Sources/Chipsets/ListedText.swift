/// One of several texts written as one literal, each ended by a NUL, picked by
/// its position: an error's texts in the order of its raw values. A switch
/// returning a StaticString per case costs some 16 bytes of code a case (the
/// literal's address is a constant LLVM will not put in a lookup table); a
/// list costs its NULs (2026-11-29, docs/PERFORMANCE.md "Tenth round").
public struct ListedText {
    let list: StaticString
    let index: UInt8

    public init(_ list: StaticString, _ index: UInt8) {
        self.list = list
        self.index = index
    }

    /// The text's bytes, without its NUL (empty past the list's end).
    @inline(never) public var bytes: UnsafeBufferPointer<UInt8> {
        let base = list.utf8Start, count = list.utf8CodeUnitCount
        var start = 0, skipped: UInt8 = 0
        while skipped < index, start < count {
            if base[start] == 0 { skipped &+= 1 }
            start &+= 1
        }
        var end = start
        while end < count, base[end] != 0 { end &+= 1 }
        return UnsafeBufferPointer(start: base + start, count: end &- start)
    }

    /// How many texts the list holds (the unit tests hold it to the cases).
    public var count: Int {
        var texts = 0
        for offset in 0 ..< list.utf8CodeUnitCount where list.utf8Start[offset] == 0 { texts += 1 }
        return texts
    }
}

extension ListedText {
    /// A set-up that ended on an answer no step expected.
    public static var unexpectedAnswer: ListedText { ListedText("unexpected answer\0", 0) }
}
