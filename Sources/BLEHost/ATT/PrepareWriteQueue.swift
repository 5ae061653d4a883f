/// Queued Prepare Write values of one client (Vol 3 Part F §3.4.6.1), fixed size.
public struct PrepareWriteQueue: ~Copyable {
    let pin = InPlacePin()
    public static var maxEntries: Int { Capacity.PreparedWriteSlots<UInt16>.count }
    var handles: Capacity.PreparedWriteSlots<UInt16> = InlineArray(repeating: 0)
    var offsets: Capacity.PreparedWriteSlots<UInt16> = InlineArray(repeating: 0)
    var ends: Capacity.PreparedWriteSlots<UInt16> = InlineArray(repeating: 0)
    var data = Capacity.PreparedWriteBytes()
    public private(set) var count = 0

    public init() {}

    mutating func append(handle: UInt16, offset: UInt16, value: UnsafeRawBufferPointer) -> Bool {
        guard count < PrepareWriteQueue.maxEntries, data.freeSpace >= value.count else { return false }
        data.append(value)
        handles[count] = handle
        offsets[count] = offset
        ends[count] = UInt16(data.count)
        count += 1
        return true
    }

    mutating func clear() {
        count = 0
        data.removeAll()
    }

    func start(_ index: Int) -> Int { index == 0 ? 0 : Int(ends[index - 1]) }
}

extension PrepareWriteQueue {
    /// Writes entry `index` into `value` at its offset: Invalid Offset past the end,
    /// Invalid Attribute Value Length beyond 512 bytes.
    func place(_ index: Int, into value: inout Capacity.AttributeValue) -> UInt8 {
        let offset = Int(offsets[index])
        let start = self.start(index)
        let length = Int(ends[index]) - start
        guard offset <= value.count else { return ATTError.invalidOffset }
        guard offset + length <= ATT.maxValueLength else { return ATTError.invalidAttributeValueLength }
        value.truncate(to: offset)
        data.withBytes { value.append(UnsafeRawBufferPointer(rebasing: $0[start..<(start + length)])) }
        return 0
    }
}
