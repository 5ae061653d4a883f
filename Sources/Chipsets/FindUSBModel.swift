import BLEHost

struct FindUSBModel: ChipsetQuestion {
    let vendor: UInt16, product: UInt16
    var found: USBModel? = nil
    mutating func ask<D: ChipsetDriver>(_ chipset: D.Type) -> Bool {
        var model = USBModel(info: D.info)
        guard D.usbModel(vendor: vendor, product: product, model: &model.model, file: &model.file) else { return false }
        found = model
        return true
    }
}

/// A board's chip (variant `variant`) and its file's names, for `--list-controllers`.
public struct BoardChip {
    public var info: ChipsetInfo
    public var model = ChipsetText()
    public var request = FileRequest()
}

struct FindBoardChip: ChipsetQuestion {
    let board: ChipsetText, variant: Int
    var found: BoardChip? = nil
    mutating func ask<D: ChipsetDriver>(_ chipset: D.Type) -> Bool {
        var chip = BoardChip(info: D.info)
        guard D.boardFiles(board: board, variant: variant, model: &chip.model, request: &chip.request) else { return false }
        found = chip
        return true
    }
}
