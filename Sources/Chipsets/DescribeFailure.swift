import BLEHost

/// The active chipset's `writeFailureDetail`, asked apart from `Describe`
/// and only when a set-up failed: one more text in the description made its
/// visit's frame pass 2 KB on the Cortex-M4 build.
struct DescribeFailure: ChipsetVisitor {
    mutating func visit<D: ChipsetDriver>(_ driver: inout D) -> ChipsetText {
        var detail = ChipsetText()
        driver.writeFailureDetail(into: &detail)
        return detail
    }
}
