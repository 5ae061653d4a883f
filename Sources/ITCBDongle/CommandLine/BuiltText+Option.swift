extension BuiltText.Builder {
    /// An option's name ("--\(option)"), from the bytes of `OptionName.names`.
    @inline(never)
    mutating func appendInterpolation(_ option: OptionName) { bytes.append(contentsOf: option.nameBytes) }
}

extension BuiltText.Builder {
    /// `text` as it may be printed (`UntrustedText`), escaped straight into
    /// the bytes rather than through a String of its own at each use.
    @inline(never)
    mutating func appendInterpolation(escaped text: String) {
        var text = text
        text.withUTF8 { utf8 in
            UntrustedText.escape(UnsafeRawBufferPointer(utf8)) { piece in
                bytes.append(contentsOf: piece)
                return true
            }
        }
    }
}
