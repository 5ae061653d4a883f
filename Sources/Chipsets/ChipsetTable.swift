import BLEHost

/// THE TABLE: one line per chipset, in the probe's order (the first chipset
/// that recognises a controller takes it). Adding a chipset is its folder and
/// its line here; the count, the dispatch and `--firmware-dir`'s help follow.
public typealias ChipsetTable =
    ChipsetEntry<RealtekChipset,
    ChipsetEntry<IntelChipset,
    ChipsetEntry<BroadcomChipset,
    ChipsetEntry<MediaTekChipset,
    NoChipset>>>>

/// The entries of the table: a chipset and the entries after it, or none.
/// Embedded Swift has no existentials, so the table is a type, each entry
/// holding its chipset's set-up state, and an index walks it (`visit`, `ask`).
public protocol ChipsetEntries {
    init()
    static var count: Int { get }
    /// `visitor` on entry `index` (0 ..< count); nil past the end.
    mutating func visit<V: ChipsetVisitor>(_ index: Int, _ visitor: inout V) -> V.Result?
    /// `reader` on entry `index`'s chipset, read where it lies; nil past the end.
    func read<R: ChipsetReader>(_ index: Int, _ reader: R) -> R.Result?
    /// `question` to entry `index`'s chipset; nil past the end.
    static func ask<Q: ChipsetQuestion>(_ index: Int, _ question: inout Q) -> Q.Result?
}

public struct ChipsetEntry<Member: Chipset, Rest: ChipsetEntries>: ChipsetEntries {
    var chipset = Member()
    var rest = Rest()

    public init() {}

    public static var count: Int { 1 + Rest.count }

    public mutating func visit<V: ChipsetVisitor>(_ index: Int, _ visitor: inout V) -> V.Result? {
        index == 0 ? visitor.visit(&chipset) : rest.visit(index - 1, &visitor)
    }

    public func read<R: ChipsetReader>(_ index: Int, _ reader: R) -> R.Result? {
        index == 0 ? reader.read(chipset) : rest.read(index - 1, reader)
    }

    public static func ask<Q: ChipsetQuestion>(_ index: Int, _ question: inout Q) -> Q.Result? {
        index == 0 ? question.ask(Member.self) : Rest.ask(index - 1, &question)
    }
}

/// The end of the table.
public struct NoChipset: ChipsetEntries {
    public init() {}
    public static var count: Int { 0 }
    public mutating func visit<V: ChipsetVisitor>(_ index: Int, _ visitor: inout V) -> V.Result? { nil }
    public func read<R: ChipsetReader>(_ index: Int, _ reader: R) -> R.Result? { nil }
    public static func ask<Q: ChipsetQuestion>(_ index: Int, _ question: inout Q) -> Q.Result? { nil }
}

extension ChipsetEntries {
    /// The first entry whose chipset answers `question` with true, or nil.
    /// Out of line: one copy per question, however many callers ask it.
    @inline(never) public static func first<Q: ChipsetQuestion>(_ question: inout Q) -> Int? where Q.Result == Bool {
        for index in 0..<count where ask(index, &question) == true { return index }
        return nil
    }

    /// The chipset and model of a USB dongle, nil when no entry knows it
    /// (`vendorClass`: its interface is FF/01/01, see `USBClaim`).
    public static func usbModel(vendor: UInt16, product: UInt16, vendorClass: Bool = false) -> USBModel? {
        var find = FindUSBModel(vendor: vendor, product: product, vendorClass: vendorClass)
        guard let index = first(&find), let info = info(index) else { return nil }
        return USBModel(info: info, model: find.model, file: find.file)
    }

    /// The chip (`query`'s variant 0, 1, …) a board (`ChipsetContext.board`)
    /// carries on its own UART, in `query.chip`; false when no entry knows it.
    public static func boardChip(_ query: inout BoardChipQuery) -> Bool {
        guard let index = first(&query), let info = info(index) else { return false }
        query.chip.info = info
        return true
    }

    /// Each entry's `ChipsetInfo`, in the table's order. Out of line: the
    /// one place the table's infos are built (inlined, each was some 180
    /// bytes of stores at every use).
    @inline(never) public static func info(_ index: Int) -> ChipsetInfo? {
        var question = InfoQuestion()
        return ask(index, &question)
    }
}
