/// Pieces the roles' output interpolates (the central's --json lines).
extension BuiltText.Builder {
    /// `\(json: text)`: the text as a JSON string (`jsonString`), or `null`.
    /// A JSON line built as one literal costs less code than its fields as a
    /// KeyValuePairs literal (an array of Strings and values at each use).
    @inline(never)
    mutating func appendInterpolation(json value: consuming String?) {
        guard let value else { return appendLiteral("null") }
        appendJSONString(value)
    }
}

extension BuiltText.Builder {
    /// An empty builder, for text put together piece by piece: one call per
    /// piece, where each `text.append("…\(n)…")` makes and frees a BuiltText.
    @inline(__always)
    init() { self.init(literalCapacity: 0, interpolationCount: 0) }

    /// `\(text)`: text built elsewhere (a part of a line), appended.
    @inline(never)
    mutating func appendInterpolation(_ text: consuming BuiltText) { bytes.append(contentsOf: text.bytes) }
}

extension BuiltText {
    @inline(__always)
    init(_ builder: consuming Builder) { self.init(stringInterpolation: builder) }
}

extension BuiltText.Builder {
    /// `\(hex4: v)`: `hex4(v)` ("002a", a small String: no allocation), made
    /// and released here once instead of at each interpolation.
    @inline(never)
    mutating func appendInterpolation(hex4 value: UInt16) { appendInterpolation(hex4(value)) }

    /// `\(hexByte: b)`: `hex(b)` ("0A"), the same way.
    @inline(never)
    mutating func appendInterpolation(hexByte byte: UInt8) { appendInterpolation(hex(byte)) }
}
