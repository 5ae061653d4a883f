import BLEHost

/// THE TABLE. Adding a chipset: its file, a stored driver here and its line in
/// `visit` and in `ask`.
public struct ChipsetTable {
    var realtek = RealtekDriver()
    var intel = IntelDriver()
    var broadcom = BroadcomDriver()
    var mediatek = MediaTekDriver()

    public static let count = 4

    public init() {}

    /// `visitor` on entry `index` (0 ..< count); nil past the end. The order is
    /// the probe's: the first chipset that recognises a controller takes it.
    public mutating func visit<V: ChipsetVisitor>(_ index: Int, _ visitor: inout V) -> V.Result? {
        switch index {
        case 0: visitor.visit(&realtek)
        case 1: visitor.visit(&intel)
        case 2: visitor.visit(&broadcom)
        case 3: visitor.visit(&mediatek)
        default: nil
        }
    }

    /// `question` to entry `index`'s chipset; nil past the end.
    public static func ask<Q: ChipsetQuestion>(_ index: Int, _ question: inout Q) -> Q.Result? {
        switch index {
        case 0: question.ask(RealtekDriver.self)
        case 1: question.ask(IntelDriver.self)
        case 2: question.ask(BroadcomDriver.self)
        case 3: question.ask(MediaTekDriver.self)
        default: nil
        }
    }

    /// The first entry whose chipset answers `question` with true, or nil.
    public static func first<Q: ChipsetQuestion>(_ question: inout Q) -> Int? where Q.Result == Bool {
        for index in 0..<count where ask(index, &question) == true { return index }
        return nil
    }
}

extension ChipsetTable {
    /// The chipset and model of a USB dongle, nil when no entry knows it
    /// (`vendorClass`: its interface is FF/01/01, see `USBClaim`).
    public static func usbModel(vendor: UInt16, product: UInt16, vendorClass: Bool = false) -> USBModel? {
        var find = FindUSBModel(vendor: vendor, product: product, vendorClass: vendorClass)
        return first(&find) == nil ? nil : find.found
    }

    /// The chip (`query`'s variant 0, 1, …) a board (`ChipsetContext.board`)
    /// carries on its own UART, in `query.chip`; false when no entry knows it.
    public static func boardChip(_ query: inout BoardChipQuery) -> Bool {
        first(&query) != nil
    }
}
