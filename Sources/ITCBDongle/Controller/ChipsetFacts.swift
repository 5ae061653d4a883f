import CLinux
import BLEHost
import Chipsets

/// The active chipset in the platform's words (its log lines). The files it
/// asks for are in its description (`VendorFiles.read`).
struct ChipsetFacts {
    var label: String
    var info: ChipsetInfo
    /// A literal of the chipset's: interpolated as it is, no String made.
    var failure: StaticString
    var summaryLevel: SummaryLevel
    var summary: String

    /// The label and summary are printed only, and may carry what the
    /// controller reported (its name, its version): escaped once, here.
    init(_ description: borrowing ChipsetDescription) {
        label = text(description.label).escaped
        info = description.info
        failure = description.failure
        summaryLevel = description.summaryLevel
        summary = text(description.summary).escaped
    }

    var directory: String { staticText(info.directory) }
    var package: String { built("Debian package \(info.package)") }
}
