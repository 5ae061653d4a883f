/// Pieces the roles' output interpolates (the central's --json lines).
extension BuiltText.Builder {
    /// `\(json: text)`: the text as a JSON string (`jsonString`), or `null`.
    /// A JSON line built as one literal costs less code than its fields as a
    /// KeyValuePairs literal (an array of Strings and values at each use).
    @inline(never)
    mutating func appendInterpolation(json value: consuming String?) {
        guard let value else { return appendLiteral("null") }
        appendInterpolation(jsonString(value))
    }
}
