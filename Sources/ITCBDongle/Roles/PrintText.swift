/// A line of standard output built as bytes (BuiltText): `printLine` takes a
/// String, and a String interpolated for it is inlined where it is printed.
@inline(never)
func printText(_ text: consuming BuiltText) {
    text.bytes.withUnsafeBytes { writeLine(1, nil, $0) }
}
