/// Pieces the roles, output and metrics interpolate (helper area C).
extension BuiltText.Builder {
    /// `\(cString: path)`: a NUL-terminated path kept as bytes, without its NUL.
    @inline(never)
    mutating func appendInterpolation(cString value: [CChar]) {
        value.withUnsafeBytes { bytes.append(contentsOf: $0[0 ..< max($0.count - 1, 0)]) }
    }
}
