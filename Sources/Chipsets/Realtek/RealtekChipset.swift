import BLEHost

/// Realtek Bluetooth controllers (RTL8723B/D, RTL8761B/BU, RTL8821C, RTL8822B/C,
/// RTL8852A/B/C, …) boot from ROM and need a patch (and for some a config blob)
/// downloaded by vendor HCI commands before they behave as the LMP version they
/// ship as. The protocol is the one documented by Linux `btrtl.c` and Bumble
/// `bumble/drivers/rtk.py`; this is an independent, sans-IO implementation.
///
/// The platform reads the files; everything here works on the caller's bytes
/// and keeps only offsets into them.

/// The table's Realtek entry: the loader behind `Chipset`. USB dongles
/// with a Realtek VID:PID are probed (Reset, Read Local Version); any other
/// transport's controller is this chipset's when Read Local Version names an
/// un-patched Realtek ROM.
public struct RealtekChipset: Chipset {
    public var loader = RealtekLoader()
    public private(set) var error: RealtekError? = nil

    public init() {}

    public static let info = ChipsetInfo(
        vendor: "Realtek", directory: "rtl_bt", package: "firmware-realtek (component non-free-firmware)",
        maximumFileSize: RealtekPatchFile.maximumFileSize, setupName: "firmware check", failureVerb: "firmware download failed")

    public static func usbStart(vendor: UInt16, product: UInt16) -> USBStart? {
        RealtekChip.isKnownUSB(vendor: vendor, product: product) ? .probe : nil
    }

    /// A VID:PID does not name the chip (one PID covers RTL8761B and RTL8761BU):
    /// the file of the chip most likely for it (Bumble's list groups them by chip).
    public static func usbModel<let n: Int>(vendor: UInt16, product: UInt16, model: inout FixedBytes<n>, file: inout FixedBytes<n>) -> Bool {
        guard RealtekChip.isKnownUSB(vendor: vendor, product: product) else { return false }
        guard RealtekChip.hasLikelyChip(vendor: vendor, product: product) else {
            append("RTL8xxx (its ROM names the chip at start)", to: &model)
            append("rtl8xxx_fw.bin (named at start)", to: &file)
            return true
        }
        let chip = RealtekChip.likely(vendor: vendor, product: product)
        append(chip.name, to: &model)
        append(chip.firmwareFile, to: &file)
        return true
    }

    public static func recognises(_ version: LocalVersion, context: ChipsetContext) -> Bool {
        RealtekChip.match(lmpSubversion: version.lmpSubversion, hciRevision: version.hciRevision, hciVersion: version.hciVersion) != nil
    }

    public mutating func resume(afterProbe event: UnsafeRawBufferPointer, context: ChipsetContext, into packet: inout Capacity.HCIPacket) -> SetupStep {
        map(loader.resume(afterReadLocalVersion: event, into: &packet))
    }

    public mutating func handle(event: UnsafeRawBufferPointer, into packet: inout Capacity.HCIPacket) -> SetupStep {
        map(loader.handle(event: event, into: &packet))
    }

    public mutating func provide(firmware: UnsafeRawBufferPointer, companion: UnsafeRawBufferPointer, into packet: inout Capacity.HCIPacket) -> SetupStep {
        map(loader.provide(firmware: firmware, config: companion, into: &packet))
    }

    /// 10 s per answer.
    public var answerTimeout: UInt64 { 10_000 }

    /// Out of line: each step of the set-up ends here.
    @inline(never)
    mutating func map(_ step: RealtekLoader.Step) -> SetupStep {
        switch step {
        case .send: return .send
        case .wait: return .wait
        case .needFiles: return .needFiles
        case .done: return .done
        case .failed(let error):
            self.error = error
            return .failed
        }
    }

    public func writeLabel<let n: Int>(into out: inout FixedBytes<n>) {
        append("Realtek ", to: &out)
        if let chip = loader.chip { append(chip.name, to: &out) } else { append("controller", to: &out) }
    }

    public func files(_ request: inout FileRequest) {
        guard let chip = loader.chip else { return }
        append(chip.firmwareFile, to: &request.firmware)
        append(chip.configFile, to: &request.companion)
        request.companionRequired = chip.configRequired
    }

    public var failure: ListedText { error?.text ?? .unexpectedAnswer }

    public func writeSummary<let n: Int>(into out: inout FixedBytes<n>) -> SummaryLevel {
        guard loader.chip != nil, loader.phase == .done else { return .none }
        append("firmware loaded (version 0x", to: &out)
        appendHex(loader.payload.firmwareVersion, digits: 8, to: &out)
        append(", ", decimal: UInt32(loader.fragmentCount), to: &out)
        append(" fragments, ROM version ", decimal: UInt32(loader.romVersion), to: &out)
        append(")", to: &out)
        return .info
    }
}
