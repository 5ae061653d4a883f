import BLEHost

/// The active chipset's `writeFailureDetail`, asked apart from `Describe`
/// and only when a set-up failed: one more text in the description made its
/// visit's frame pass 2 KB on the Cortex-M4 build.
struct DescribeFailure: ChipsetReader {
    func read<C: Chipset>(_ chipset: borrowing C) -> Capacity.ChipsetText {
        var detail = Capacity.ChipsetText()
        chipset.writeFailureDetail(into: &detail)
        return detail
    }
}
