import BLEHost

/// The active chipset's `writeFailureDetail`, asked apart from `Describe`
/// and only when a set-up failed: one more text in the description made its
/// visit's frame pass 2 KB on the Cortex-M4 build.
struct DescribeFailure: ChipsetReader {
    func read<D: ChipsetDriver>(_ driver: borrowing D) -> Capacity.ChipsetText {
        var detail = Capacity.ChipsetText()
        driver.writeFailureDetail(into: &detail)
        return detail
    }
}
