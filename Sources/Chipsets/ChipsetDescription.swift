import BLEHost

/// What the board logs about the active chipset, written without allocation.
public struct ChipsetDescription {
    /// Its entry in the table: the info is taken from there when asked
    /// (built in each entry's description, it was a fifth of `Describe`'s visit).
    public let index: Int
    public var info: ChipsetInfo { ChipsetTable.info(index)! }
    /// "Realtek RTL8761B/BU".
    public var label = Capacity.ChipsetText()
    public var request = FileRequest()
    public var failure: ListedText
    public var summaryLevel: SummaryLevel
    public var summary = Capacity.ChipsetText()
}
