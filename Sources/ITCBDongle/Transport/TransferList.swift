import BLEHost
import CLibUSB
import CLinux
import Chipsets

/// A fixed list of transfers, made once: a stack (`push`/`pop`) for the free
/// pools, a FIFO (`push`/`popFirst`) for completions. Never grows.
struct TransferList {
    let slots: UnsafeMutablePointer<UnsafeMutablePointer<libusb_transfer>?>
    let capacity: Int
    var head = 0
    private(set) var count = 0

    /// Out of line: the transport makes six lists at open.
    @inline(never)
    init(capacity: Int) {
        self.capacity = capacity
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: nil, count: capacity)
    }

    subscript(index: Int) -> UnsafeMutablePointer<libusb_transfer> { slots[(head + index) % capacity]! }

    mutating func push(_ transfer: UnsafeMutablePointer<libusb_transfer>) {
        guard count < capacity else { return }
        slots[(head + count) % capacity] = transfer
        count += 1
    }

    /// The newest.
    mutating func pop() -> UnsafeMutablePointer<libusb_transfer>? {
        guard count > 0 else { return nil }
        count -= 1
        return slots[(head + count) % capacity]
    }

    /// The oldest.
    mutating func popFirst() -> UnsafeMutablePointer<libusb_transfer>? {
        guard count > 0 else { return nil }
        let transfer = slots[head]
        head = (head + 1) % capacity
        count -= 1
        return transfer
    }

    mutating func removeAll() {
        head = 0
        count = 0
    }
}
