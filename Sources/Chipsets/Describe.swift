import BLEHost

struct Describe: ChipsetReader {
    func read<D: ChipsetDriver>(_ driver: borrowing D) -> ChipsetDescription {
        var description = ChipsetDescription(info: D.info, failure: driver.failure, summaryLevel: .none)
        driver.writeLabel(into: &description.label)
        driver.files(&description.request)
        description.summaryLevel = driver.writeSummary(into: &description.summary)
        return description
    }
}
