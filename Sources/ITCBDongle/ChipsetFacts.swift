import CLinux
import BLEHost
import Chipsets

/// The active chipset in the platform's words (its log lines, its files).
struct ChipsetFacts {
    var label: String
    var info: ChipsetInfo
    var request: FileRequest
    var failure: String
    var summaryLevel: SummaryLevel
    var summary: String

    init(_ description: ChipsetDescription) {
        label = text(description.label)
        info = description.info
        request = description.request
        failure = "\(description.failure)"
        summaryLevel = description.summaryLevel
        summary = text(description.summary)
    }

    var directory: String { "\(info.directory)" }
    var package: String { "Debian package \(info.package)" }
}
