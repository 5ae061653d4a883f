extension InlineArray where Element: ~Copyable {
    /// Every element from `make`, filled by a loop that stays a loop: the
    /// optimiser unrolls the loops of `init(repeating:)` and `init(_:)` (up to
    /// 32 elements), one copy of the element's code per slot; the host's
    /// rings, tables and links took 2 KB of start-up code that way.
    public init(filling make: () -> Element) {
        self.init(initializingWith: { (slots: inout OutputSpan<Element>) in
            while !slots.isFull { slots.append(make()) }
        })
    }
}
