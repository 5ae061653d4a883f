import BLEHost

/// The model and file are written in place; the info is the table's, taken
/// once by index (`ChipsetEntries.usbModel`): built in each entry's answer,
/// it was most of a 4.5 KB function.
struct FindUSBModel: ChipsetQuestion {
    let vendor: UInt16, product: UInt16, vendorClass: Bool
    var model = Capacity.ChipsetText()
    var file = Capacity.ChipsetText()
    mutating func ask<C: Chipset>(_ chipset: C.Type) -> Bool {
        // The entry that claims it (USBClaim's rules), then its model.
        guard USBClaim.start(C.self, vendor: vendor, product: product, vendorClass: vendorClass) != nil else { return false }
        model.removeAll()
        file.removeAll()
        return C.usbModel(vendor: vendor, product: product, model: &model, file: &file)
    }
}

/// A board's chip (variant `variant`) and its file's names, for `--list-controllers`.
public struct BoardChip {
    public var info: ChipsetInfo
    public var model = Capacity.ChipsetText()
    public var request = FileRequest()
}

/// Asks the table for a board's chip, written in place into `chip` (a
/// `FileRequest` is most of a kilobyte: an optional result copied out of the
/// question and returned made a 3 KB frame on the Cortex-M4 build). Its
/// `info` is set by `ChipsetEntries.boardChip`, from the table by index.
public struct BoardChipQuery: ChipsetQuestion {
    let board: Capacity.ChipsetText, variant: Int
    public var chip: BoardChip

    public init(board: Capacity.ChipsetText, variant: Int) {
        self.board = board
        self.variant = variant
        // Until a chipset answers (`ask` writes its own).
        chip = BoardChip(info: ChipsetInfo(vendor: "-", directory: "", package: "", maximumFileSize: 0,
                                           setupName: "", failureVerb: ""))
    }

    public mutating func ask<C: Chipset>(_ chipset: C.Type) -> Bool {
        chip.model.removeAll()
        chip.request.removeAll()
        return C.boardFiles(board: board, variant: variant, model: &chip.model, request: &chip.request)
    }
}
