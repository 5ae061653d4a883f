import CLinux
import BLEHost
import Chipsets

/// The active chipset in the platform's words (its log lines). The files it
/// asks for are in its description (`VendorFiles.read`). Its texts stay the
/// chipset's bytes, escaped where printed (`\(escapedText:)`): no String made
/// each time the facts are asked for.
struct ChipsetFacts {
    var label: Capacity.ChipsetText
    var info: ChipsetInfo
    /// One of the chipset's literals: interpolated as it is, no String made.
    var failure: ListedText
    var summaryLevel: SummaryLevel
    var summary: Capacity.ChipsetText

    /// The label and summary are printed only, and may carry what the
    /// controller reported (its name, its version): escaped where printed.
    init(_ description: borrowing ChipsetDescription) {
        label = description.label
        info = description.info
        failure = description.failure
        summaryLevel = description.summaryLevel
        summary = description.summary
    }
}

extension BuiltText.Builder {
    /// `\(escapedText: text)`: a chipset's text as `text(_:).escaped` shows it
    /// (decoded, then escaped: UntrustedText).
    @inline(never)
    mutating func appendInterpolation(escapedText value: Capacity.ChipsetText) {
        appendInterpolation(escaped: text(value))
    }
}
