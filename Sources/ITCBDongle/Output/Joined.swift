extension Array where Element == String {
    /// The stdlib's `joined(separator:)` for an Array of Strings, once in the
    /// binary: more specific than Sequence's and BidirectionalCollection's
    /// generic ones, so every `[String].joined(separator:)` of the platform
    /// calls this (the same text) rather than a 1.6 KB specialisation of each.
    @inline(never)
    func joined(separator: String = "") -> String {
        // Into one byte buffer by BuiltText's outlined appends (String.append is inlined).
        var text = BuiltText.Builder(literalCapacity: 0, interpolationCount: count)
        for (index, part) in enumerated() {
            if index > 0 { text.appendInterpolation(separator) }
            text.appendInterpolation(part)
        }
        return String(repairingUTF8: text.bytes)
    }
}
