import BLEHost

/// What the board logs about the active chipset, written without allocation.
public struct ChipsetDescription {
    public var info: ChipsetInfo
    /// "Realtek RTL8761B/BU".
    public var label = Capacity.ChipsetText()
    public var request = FileRequest()
    public var failure: StaticString
    public var summaryLevel: SummaryLevel
    public var summary = Capacity.ChipsetText()
}
