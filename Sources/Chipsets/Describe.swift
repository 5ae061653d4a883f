import BLEHost

struct Describe: ChipsetReader {
    /// The entry read (`ChipsetDescription.index`).
    let index: Int
    /// Out of line, one function per chipset (as `StepCall.visit`).
    @inline(never) func read<C: Chipset>(_ chipset: borrowing C) -> ChipsetDescription {
        var description = ChipsetDescription(blank: index)
        description.failure = chipset.failure
        chipset.writeLabel(into: &description.label)
        chipset.files(&description.request)
        description.summaryLevel = chipset.writeSummary(into: &description.summary)
        return description
    }
}

extension ChipsetDescription {
    /// Out of line: each chipset's `Describe.read` zeroed its own copy.
    @inline(never) init(blank index: Int) { self.init(index: index, failure: ListedText("", 0), summaryLevel: .none) }
}
