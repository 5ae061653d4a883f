/// A String of a StaticString's bytes (the chipset table's names): one
/// outlined call, where `"\(name)"` inlines a whole String interpolation.
@inline(never)
func staticText(_ text: StaticString) -> String {
    String(repairingUTF8: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
}
