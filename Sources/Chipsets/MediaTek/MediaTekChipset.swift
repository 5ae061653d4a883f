import BLEHost

/// The table's MediaTek entry. USB dongles with a MediaTek VID:PID start with
/// the register reads (the chip answers nothing useful before its RAM code);
/// on other transports a controller is this chipset's when Read Local Version
/// says MediaTek (company 70).
public struct MediaTekChipset: LoaderChipset {
    public var loader = MediaTekLoader()
    var overUSB = false
    var usbChip: UInt16 = 0

    public init() {}

    public static let info = ChipsetInfo(
        vendor: "MediaTek", directory: "mediatek", package: "firmware-mediatek (component non-free-firmware)",
        maximumFileSize: MediaTekRAMCode.maximumFileSize, setupName: "RAM code download", failureVerb: "RAM code download failed",
        quirks: ChipsetQuirks(vendorControlOverUSB: true, ownReset: true))

    public static func usbStart(vendor: UInt16, product: UInt16) -> USBStart? {
        MediaTekChip.usbChip(vendor: vendor, product: product) == nil ? nil : .fromReset
    }

    /// The model the VID:PID names and the file a typical unit needs.
    public static func usbModel<let n: Int>(vendor: UInt16, product: UInt16, model: inout FixedBytes<n>, file: inout FixedBytes<n>) -> Bool {
        guard let chip = MediaTekChip.usbChip(vendor: vendor, product: product) else { return false }
        guard let name = MediaTekChip.name(id: UInt32(chip)) else {
            append("MT79xx (the chip id names it)", to: &model)
            append("BT_RAM_CODE_MT79xx_1_x_hdr.bin (named at start)", to: &file)
            return true
        }
        append(name, to: &model)
        // The units Debian's files serve: MT7961 silicon version 1, the others 0.
        MediaTekChip.writeFileName(id: UInt32(chip), version: chip == 0x7961 ? 1 : 0, flavour: false, into: &file)
        return true
    }

    public static func recognises(_ version: LocalVersion, context: ChipsetContext) -> Bool {
        version.manufacturer == 70 && !context.overUSB
    }

    public mutating func start(context: ChipsetContext, into packet: inout Capacity.HCIPacket) -> SetupStep {
        overUSB = context.overUSB
        usbChip = MediaTekChip.usbChip(vendor: context.usbVendor, product: context.usbProduct) ?? 0
        return loader.start(reset: context.resetFirst, into: &packet)
    }

    public mutating func resume(afterProbe event: UnsafeRawBufferPointer, context: ChipsetContext, into packet: inout Capacity.HCIPacket) -> SetupStep {
        start(context: context, into: &packet)
    }

    public mutating func shutdown(into packet: inout Capacity.HCIPacket) -> SetupStep {
        loader.shutdown(into: &packet)
    }

    /// Linux waits HCI_INIT_TIMEOUT (10 s) for each WMT answer; one comes in milliseconds.
    public var answerTimeout: UInt64 { 5_000 }

    public func writeLabel<let n: Int>(into out: inout FixedBytes<n>) {
        append("MediaTek ", to: &out)
        append(MediaTekChip.name(id: loader.chipID != 0 ? loader.chipID : UInt32(usbChip)) ?? "MT79xx", to: &out)
    }

    public func files(_ request: inout FileRequest) {
        MediaTekChip.writeFileName(id: loader.chipID, version: loader.firmwareVersion, flavour: loader.flavour, into: &request.firmware)
    }

    public var failure: ListedText { loader.error?.text ?? .unexpectedAnswer }

    public func writeSummary<let n: Int>(into out: inout FixedBytes<n>) -> SummaryLevel {
        if loader.phase == .portReset {
            // Linux logs "Reset timeout" and goes on; so does this, saying so.
            append(loader.resetConfirmed ? "subsystem reset done" : "subsystem reset (not confirmed within 1 s)", to: &out)
            return .info
        }
        guard loader.phase == .done else { return .none }
        guard loader.sectionsLoaded > 0 else {
            append("RAM code already running; Bluetooth on", to: &out)
            return .debug
        }
        append("RAM code loaded (", decimal: UInt32(loader.sectionsLoaded), to: &out)
        append(" of ", decimal: UInt32(loader.sections), to: &out)
        append(" sections, ", decimal: UInt32(loader.commandsSent), to: &out)
        append(" WMT commands); Bluetooth on", to: &out)
        return .info
    }
}
