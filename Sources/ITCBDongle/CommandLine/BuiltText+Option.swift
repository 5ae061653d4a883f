extension BuiltText.Builder {
    /// An option's name ("--\(option)"), from the bytes of `OptionName.names`.
    @inline(never)
    mutating func appendInterpolation(_ option: OptionName) { bytes.append(contentsOf: option.nameBytes) }
}
