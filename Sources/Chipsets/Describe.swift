import BLEHost

struct Describe: ChipsetReader {
    /// The entry read (`ChipsetDescription.index`).
    let index: Int
    /// Out of line, one function per chipset (as `StepCall.visit`).
    @inline(never) func read<C: Chipset>(_ chipset: borrowing C) -> ChipsetDescription {
        var description = ChipsetDescription(index: index, failure: chipset.failure, summaryLevel: .none)
        chipset.writeLabel(into: &description.label)
        chipset.files(&description.request)
        description.summaryLevel = chipset.writeSummary(into: &description.summary)
        return description
    }
}
