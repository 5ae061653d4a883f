import BLEHost

/// The active chipset's `writeFailureDetail`, asked apart from `Describe`
/// and only when a set-up failed: one more text in the description made its
/// visit's frame pass 2 KB on the Cortex-M4 build. Written in place through
/// `out`: no 128-byte text copied back up through each level of the table.
struct DescribeFailure: ChipsetReader {
    let out: UnsafeMutablePointer<Capacity.ChipsetText>
    func read<C: Chipset>(_ chipset: borrowing C) {
        chipset.writeFailureDetail(into: &out.pointee)
    }
}
