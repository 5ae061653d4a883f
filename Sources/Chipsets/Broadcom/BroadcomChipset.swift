import BLEHost

/// Broadcom and Cypress (Infineon) controllers: the Raspberry Pi's own radio
/// on its UART (BCM43430A1, BCM43430B0, BCM4345C0, BCM4345C5/CYW43455) and
/// USB dongles (BCM20702). They boot from ROM; their patchram (`.hcd`, a list
/// of HCI command records) is sent after Download Minidriver, the last record
/// (Launch RAM) restarts the chip into the patched firmware. Facts from Linux
/// `btbcm.c`/`hci_bcm.c` and BTstack `chipset/bcm`; an independent, sans-IO
/// implementation.
///
/// Sequence (after the probe's Reset and Read Local Version): Download
/// Minidriver, 50 ms, every record of the file, 250 ms for the restart, Reset,
/// Read Local Version (the patched build), on a UART with a faster rate asked
/// Update UART Baud Rate, then Read BD_ADDR: an address from the kernel's list
/// of defaults (every unit of a model shares it) is never used as the public one.

/// The table's Broadcom/Cypress entry. USB dongles with a Broadcom VID:PID
/// are probed; on any transport a controller is this chipset's when Read Local
/// Version says Broadcom (15) or Cypress (305) with a subversion `btbcm.c` names.
public struct BroadcomChipset: LoaderChipset {
    public var loader = BroadcomLoader()
    var context = ChipsetContext()

    public init() {}

    public static let info = ChipsetInfo(
        vendor: "Broadcom", directory: "brcm", package: "bluez-firmware (component non-free-firmware)",
        maximumFileSize: BroadcomPatchram.maximumFileSize, setupName: "patchram download", failureVerb: "patchram download failed",
        quirks: ChipsetQuirks(runsFromROMOverUSB: true, probedOnEveryUART: true),
        // bluez-firmware (Debian 12's 1.2-9, Debian 13's 1.2-13) ships the Raspberry Pi's four
        // BCM434xx/4345 files only; BCM20702A1-VID-PID.hcd is in Broadcom's Windows driver.
        usbPackage: "")

    public static func usbStart(vendor: UInt16, product: UInt16) -> USBStart? {
        BroadcomChip.isKnownUSB(vendor: vendor, product: product) ? .probe : nil
    }

    public static func usbVendorClass(vendor: UInt16) -> USBStart? {
        BroadcomChip.isPatchramVendor(vendor) ? .probe : nil
    }

    /// The model is learnt from Read Local Version; the file Linux looks for first on a BCM20702A1.
    public static func usbModel<let n: Int>(vendor: UInt16, product: UInt16, model: inout FixedBytes<n>, file: inout FixedBytes<n>) -> Bool {
        // Asked once the table's rules gave it to Broadcom (by VID:PID or by the vendor's FF/01/01 class).
        guard BroadcomChip.isKnownUSB(vendor: vendor, product: product) || BroadcomChip.isPatchramVendor(vendor) else { return false }
        append("BCM20702A1", to: &model)
        append("BCM20702A1-", to: &file)
        appendHex(UInt32(vendor), digits: 4, to: &file)
        append("-", to: &file)
        appendHex(UInt32(product), digits: 4, to: &file)
        append(".hcd", to: &file)
        return true
    }

    public static func recognises(_ version: LocalVersion, context: ChipsetContext) -> Bool {
        BroadcomChip.isBroadcom(manufacturer: version.manufacturer)
            && BroadcomChip.name(lmpSubversion: version.lmpSubversion, overUSB: context.overUSB) != nil
    }

    public mutating func resume(afterProbe event: UnsafeRawBufferPointer, context: ChipsetContext, into packet: inout Capacity.HCIPacket) -> SetupStep {
        self.context = context
        guard let version = LocalVersion(commandComplete: event),
              let chip = BroadcomChip.name(lmpSubversion: version.lmpSubversion, overUSB: context.overUSB) else { return .done }
        return (loader.begin(chip: chip, version: version, uartBaud: context.uartBaud, targetBaud: context.uartTargetBaud))
    }

    /// Linux's HCI_INIT_TIMEOUT is 10 s; a record is answered in milliseconds.
    public var answerTimeout: UInt64 { 5_000 }

    public var portBaudRate: UInt32 { loader.baudRate }

    public var sharedDefaultAddress: BDAddress? { loader.sharedDefaultAddress }

    public func writeLabel<let n: Int>(into out: inout FixedBytes<n>) {
        append(loader.manufacturer == 305 ? "Cypress " : "Broadcom ", to: &out)
        append(loader.chip, to: &out)
    }

    /// Linux's names in Linux's order (`BroadcomNames`).
    public func files(_ request: inout FileRequest) {
        BroadcomNames.add(chip: loader.chip, context: context, into: &request)
        request.optional = context.overUSB && Self.info.quirks.runsFromROMOverUSB
    }

    /// The board's chip `variant` (0, then 1 for a board sold with two) and the
    /// names its file is looked for under on the board's UART.
    public static func boardFiles(board: Capacity.ChipsetText, variant: Int, model: inout Capacity.ChipsetText, request: inout FileRequest) -> Bool {
        guard let chip = BroadcomBoards.chip(board: board, variant: variant) else { return false }
        append(chip, to: &model)
        var context = ChipsetContext()
        context.board = board
        BroadcomNames.add(chip: chip, context: context, into: &request)
        return true
    }

    public var failure: ListedText { loader.error?.text ?? .unexpectedAnswer }

    public func writeSummary<let n: Int>(into out: inout FixedBytes<n>) -> SummaryLevel {
        guard loader.phase == .done, loader.patched else { return .none }
        append("patchram loaded (", decimal: UInt32(loader.records), to: &out)
        append(" records, build ", decimal: UInt32(loader.romBuild), to: &out)
        append(" -> ", decimal: UInt32(loader.patchedBuild), to: &out)
        if loader.baudRate > 0 {
            append(", UART at ", decimal: loader.baudRate, to: &out)
            append(" baud", to: &out)
        }
        append(")", to: &out)
        return .info
    }
}
