/// A fixed-capacity FIFO for values of any type (events, commands). Slots hold
/// plain elements (a filler until first use), so a pop copies the element out
/// once and writes nothing back.
public struct FixedQueue<let capacity: Int, Element>: ~Copyable {
    var items: InlineArray<capacity, Element>
    var head = 0
    public private(set) var count = 0

    #if ITCB_FIRMWARE
    /// The firmware's rings are short, and filled in place: `filling`'s loop
    /// would build them in temporaries on `Host.init`'s frame (over its 2 KB).
    public init(filler: Element) { items = InlineArray(repeating: filler) }
    #else
    public init(filler: Element) { items = InlineArray(filling: { filler }) }
    #endif

    public var isEmpty: Bool { count == 0 }
    public var isFull: Bool { count == capacity }
    /// How many elements fit.
    public var maxCount: Int { capacity }
    public static var capacityCount: Int { capacity }

    // Slots are found modulo the capacity as unsigned numbers, so each index is
    // proven in range where it is made and the slot is reached unchecked.
    @discardableResult
    public mutating func push(_ item: Element) -> Bool {
        guard count < capacity else { return false }
        let slot = (UInt(bitPattern: head) &+ UInt(bitPattern: count)) % UInt(bitPattern: capacity)
        unsafe items[unchecked: Int(bitPattern: slot)] = item
        count &+= 1  // < capacity: no overflow
        return true
    }

    public mutating func pop() -> Element? {
        guard count > 0 else { return nil }
        let index = UInt(bitPattern: head) % UInt(bitPattern: capacity)
        head = Int(bitPattern: (index &+ 1) % UInt(bitPattern: capacity))
        count &-= 1  // > 0: no overflow
        return unsafe items[unchecked: Int(bitPattern: index)]
    }

    public mutating func removeAll() {
        head = 0
        count = 0
    }
}
