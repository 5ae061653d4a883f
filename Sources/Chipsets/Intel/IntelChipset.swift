import BLEHost

/// Intel Bluetooth controllers (8265, 9260/9560, AX200/AX201, AX210/AX211, …)
/// start in a boot loader and need their operational firmware (`ibt-*.sfi`,
/// Debian package firmware-iwlwifi) sent by Intel Secure Send vendor commands,
/// then a vendor reset into it, then their device configuration (`.ddc`). The
/// protocol is the one documented by Linux `btintel.c` and Bumble
/// `bumble/drivers/intel.py`; this is an independent, sans-IO implementation.
///
/// Two generations answer Intel Read Version differently:
/// - legacy (hardware variants 0x0B…0x14: 8260/8265, 9260/9560, AX200/AX201): a
///   fixed 10-byte structure; the boot loader also has Read Boot Params;
/// - TLV (variants 0x17 and later: AX210, AX211, BE200): type-length-value
///   records (Linux `btintel_parse_version_tlv`).
///
/// The platform reads the files; everything here works on the caller's bytes.

/// The table's Intel entry: the loader behind `Chipset`. A USB dongle
/// with an Intel VID:PID starts at HCI Reset (its boot loader does not answer
/// Read Local Version); on other transports the probe hands over when Read
/// Local Version says Intel (company identifier 2).
public struct IntelChipset: Chipset {
    public var loader = IntelLoader()
    public private(set) var error: IntelError? = nil
    /// The loader downloaded firmware (false: it was already running).
    public private(set) var loaded = false
    var overUSB = false

    public init() {}

    public static let info = ChipsetInfo(
        vendor: "Intel", directory: "intel", package: "firmware-iwlwifi (component non-free-firmware)",
        maximumFileSize: IntelFirmwareLayout.maximumFileSize, setupName: "firmware load", failureVerb: "firmware load failed")

    public static func usbStart(vendor: UInt16, product: UInt16) -> USBStart? {
        IntelUSB.isKnown(vendor: vendor, product: product) ? .fromReset : nil
    }

    /// The PID names the model; the file a typical unit needs (the exact one is named by Intel Read Version at start).
    public static func usbModel<let n: Int>(vendor: UInt16, product: UInt16, model: inout FixedBytes<n>, file: inout FixedBytes<n>) -> Bool {
        guard vendor == IntelUSB.vendor, let known = IntelUSB.model(product: product) else { return false }
        append(known.name, to: &model)
        append(known.typicalFile, to: &file)
        return true
    }

    /// Not over USB: there the VID:PID decides.
    public static func recognises(_ version: LocalVersion, context: ChipsetContext) -> Bool {
        version.manufacturer == 2 && !context.overUSB
    }

    public mutating func start(context: ChipsetContext, into packet: inout Capacity.HCIPacket) -> SetupStep {
        overUSB = context.overUSB
        return map(loader.start(into: &packet))
    }

    public mutating func resume(afterProbe event: UnsafeRawBufferPointer, context: ChipsetContext, into packet: inout Capacity.HCIPacket) -> SetupStep {
        overUSB = context.overUSB
        return map(loader.startAtReadVersion(into: &packet))
    }

    public mutating func handle(event: UnsafeRawBufferPointer, into packet: inout Capacity.HCIPacket) -> SetupStep {
        map(loader.handle(event: event, into: &packet))
    }

    public mutating func provide(firmware: UnsafeRawBufferPointer, companion: UnsafeRawBufferPointer, into packet: inout Capacity.HCIPacket) -> SetupStep {
        map(loader.provide(firmware: firmware, ddc: companion, into: &packet))
    }

    /// 5 s per answer (a download is thousands of commands).
    public var answerTimeout: UInt64 { 5_000 }

    /// Over USB, Secure Send goes on bulk OUT (Linux btusb does the same).
    public var commandOnBulk: Bool { overUSB && loader.phase == .secureSend }

    /// While the loader runs over USB, bulk IN carries HCI events (btusb_recv_bulk_intel).
    public var eventsOnBulk: Bool { overUSB && loader.phase != .done && loader.phase != .failed }

    /// Out of line: each step of the set-up ends here.
    @inline(never)
    mutating func map(_ step: IntelLoader.Step) -> SetupStep {
        switch step {
        case .send: return .send
        case .wait: return .wait
        case .needFiles: return .needFiles
        case .done(let loaded):
            self.loaded = loaded
            return .done
        case .failed(let error):
            self.error = error
            return .failed
        }
    }

    public func writeLabel<let n: Int>(into out: inout FixedBytes<n>) {
        append("Intel ", to: &out)
        append(loader.version.name, to: &out)
    }

    public func files(_ request: inout FileRequest) {
        loader.version.writeBaseName(into: &request.firmware)
        loader.version.writeBaseName(into: &request.companion)
        append(".sfi", to: &request.firmware)
        append(".ddc", to: &request.companion)
    }

    public var failure: ListedText { error?.text ?? .unexpectedAnswer }

    /// The file Linux would load at the step this loader does not take: the
    /// intermediate loader a boot loader of variant 0x1e on boots first, or the
    /// firmware a running intermediate loader names (`btintel_get_fw_name_tlv`).
    public func writeFailureDetail<let n: Int>(into out: inout FixedBytes<n>) {
        switch error {
        case .intermediateLoaderStep?:
            append("it needs ", to: &out)
            writeFile(into: &out)
            append(" first, then the firmware file that loader names", to: &out)
        case .intermediateLoader?:
            append("Linux loads ", to: &out)
            writeFile(into: &out)
            append(" from there", to: &out)
        default:
            break
        }
    }

    /// `intel/<base name>.sfi`.
    func writeFile<let n: Int>(into out: inout FixedBytes<n>) {
        append(Self.info.directory, to: &out)
        _ = out.append(UInt8(ascii: "/"))
        loader.version.writeBaseName(into: &out)
        append(".sfi", to: &out)
    }

    public func writeSummary<let n: Int>(into out: inout FixedBytes<n>) -> SummaryLevel {
        guard loaded else {
            append("operational firmware already running", to: &out)
            return .debug
        }
        append("firmware loaded (", to: &out)
        loader.version.writeBaseName(into: &out)
        append(".sfi, ", decimal: UInt32(loader.commandsSent), to: &out)
        append(" vendor commands, boot address 0x", to: &out)
        appendHex(loader.bootAddress, digits: 8, to: &out)
        append(", ", decimal: UInt32(loader.ddcRecords), to: &out)
        append(" DDC records)", to: &out)
        return .info
    }
}
