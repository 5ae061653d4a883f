import BLEHost

struct Describe: ChipsetReader {
    func read<C: Chipset>(_ chipset: borrowing C) -> ChipsetDescription {
        var description = ChipsetDescription(info: C.info, failure: chipset.failure, summaryLevel: .none)
        chipset.writeLabel(into: &description.label)
        chipset.files(&description.request)
        description.summaryLevel = chipset.writeSummary(into: &description.summary)
        return description
    }
}
