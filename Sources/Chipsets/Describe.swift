import BLEHost

/// Written in place through `out`, made blank once by the caller: no
/// description zeroed by each chipset's read and copied up through each
/// level of the table.
struct Describe: ChipsetReader {
    let out: UnsafeMutablePointer<ChipsetDescription>
    /// Out of line, one function per chipset (as `StepCall.visit`).
    @inline(never) func read<C: Chipset>(_ chipset: borrowing C) {
        out.pointee.failure = chipset.failure
        chipset.writeLabel(into: &out.pointee.label)
        chipset.files(&out.pointee.request)
        out.pointee.summaryLevel = chipset.writeSummary(into: &out.pointee.summary)
    }
}
