extension InlineArray where Element: ~Copyable {
    /// Every element from `make`, filled by a loop that stays a loop: the
    /// optimiser unrolls the loops of `init(repeating:)` and `init(_:)` (up to
    /// 32 elements), one copy of the element's code per slot: 2 KB of the
    /// host's start-up code. The element is built in a temporary and moved,
    /// so a table of large elements is better filled in place.
    public init(filling make: () -> Element) {
        self.init(initializingWith: { (slots: inout OutputSpan<Element>) in
            while !slots.isFull { slots.append(make()) }
        })
    }
}
