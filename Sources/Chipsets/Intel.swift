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

/// Intel vendor opcodes (OGF 0x3F).
public enum IntelOpcode {
    /// Vendor reset: type, patch enable, DDC reload, boot option, boot address (LE32). No Command Complete.
    public static let reset: UInt16 = 0xFC01
    /// Parameter 0xFF asks for the TLV form (legacy chips ignore it and answer the fixed form).
    public static let readVersion: UInt16 = 0xFC05
    /// Parameters: fragment type (0 CSS header, 1 data, 2 signature, 3 public key), up to 252 bytes.
    public static let secureSend: UInt16 = 0xFC09
    /// Legacy boot loader: device revision, limited-CCE flag, OTP address …
    public static let readBootParams: UInt16 = 0xFC0D
    /// Inside the firmware payload: its first 4 parameter bytes are the boot address.
    public static let writeBootParams: UInt16 = 0xFC0E
    /// One DDC record (length byte + ID + value) per command.
    public static let writeDeviceConfig: UInt16 = 0xFC8B
    /// Vendor event (0xFF) kinds, first parameter byte.
    public static let eventBoot: UInt8 = 0x02
    public static let eventDownloadComplete: UInt8 = 0x06
}

/// What Read Version (and, for legacy boot loaders, Read Boot Params) said.
public struct IntelVersion: Equatable {
    public enum Generation: UInt8 { case legacy, tlv }
    public var generation: Generation = .tlv
    public var platform: UInt8 = 0
    public var variant: UInt8 = 0
    /// Legacy: hardware and firmware revision (file names of variants 0x11…0x14).
    public var hardwareRevision: UInt8 = 0
    public var firmwareRevision: UInt8 = 0
    /// Boot loader (true) or operational firmware.
    public var inBootloader = false
    /// TLV image type 0x02: an intermediate loader (not supported).
    public var intermediate = false
    public var deviceRevision: UInt16 = 0
    public var cnviTop: UInt32 = 0
    public var cnvrTop: UInt32 = 0
    public var hasCNVI = false
    public var hasCNVR = false
    /// Secure boot engine: 0 RSA, 1 ECDSA; 0xFF when not reported.
    public var secureBootEngine: UInt8 = 0xFF
    public var limitedCCE: UInt8 = 0

    public init() {}

    /// Parses the return parameters of Read Version (status first). Legacy is
    /// recognised as Linux does: exactly 10 bytes with platform 0x37 second.
    public static func parse(_ rp: UnsafeRawBufferPointer) -> IntelVersion? {
        guard rp.count >= 1, rp[0] == HCIStatus.success else { return nil }
        var v = IntelVersion()
        if rp.count == 10 && rp[1] == 0x37 {
            v.generation = .legacy
            v.platform = rp[1]
            v.variant = rp[2]
            v.hardwareRevision = rp[3]
            v.inBootloader = rp[4] == 0x06
            guard rp[4] == 0x06 || rp[4] == 0x23 else { return nil }
            v.firmwareRevision = rp[5]
            return v
        }
        var at = 1
        while rp.count - at >= 2 {
            let type = rp[at], length = Int(rp[at + 1])
            guard rp.count - at - 2 >= length else { return nil }
            let value = UnsafeRawBufferPointer(rebasing: rp[(at + 2)..<(at + 2 + length)])
            switch type {
            case 0x00: return v.checked
            case 0x10 where length >= 4: v.cnviTop = le32(value); v.hasCNVI = true
            case 0x11 where length >= 4: v.cnvrTop = le32(value); v.hasCNVR = true
            case 0x12 where length >= 4:
                let bt = le32(value)
                v.platform = UInt8(truncatingIfNeeded: bt >> 8)
                v.variant = UInt8(truncatingIfNeeded: bt >> 16) & 0x3F
            case 0x16 where length >= 2: v.deviceRevision = UInt16(value[0]) | UInt16(value[1]) << 8
            case 0x1C where length >= 1:
                v.inBootloader = value[0] == 0x01
                v.intermediate = value[0] == 0x02
            case 0x2E where length >= 1: v.limitedCCE = value[0]
            case 0x2F where length >= 1: v.secureBootEngine = value[0]
            default: break
            }
            at += 2 + length
        }
        return v.checked
    }

    var checked: IntelVersion? { platform == 0x37 ? self : nil }

    /// Read Boot Params (legacy boot loader): status, OTP format/content/patch, device revision …
    mutating func applyBootParams(_ rp: UnsafeRawBufferPointer) -> Bool {
        // 23 bytes (Linux struct intel_boot_params): limited CCE is byte 21.
        guard rp.count >= 23, rp[0] == HCIStatus.success else { return false }
        deviceRevision = UInt16(rp[4]) | UInt16(rp[5]) << 8
        limitedCCE = rp[21]
        return true
    }

    /// The variants this loader knows (Linux `btintel_version_info` / `_tlv`).
    public var isSupported: Bool {
        switch (generation, variant) {
        case (.legacy, 0x0B), (.legacy, 0x0C), (.legacy, 0x11...0x14): true
        case (.tlv, 0x17...0x19), (.tlv, 0x1B), (.tlv, 0x1C), (.tlv, 0x1E): true
        default: false
        }
    }

    public var name: StaticString {
        switch (generation, variant) {
        case (.legacy, 0x0B): "8260"
        case (.legacy, 0x0C): "8265"
        case (.legacy, 0x11): "9460/9560"
        case (.legacy, 0x12): "9160/9260"
        case (.legacy, 0x13): "AX201"
        case (.legacy, 0x14): "AX200"
        case (.tlv, 0x17): "AX210"
        case (.tlv, 0x18), (.tlv, 0x19): "AX211"
        case (.tlv, 0x1B): "BE201"
        case (.tlv, 0x1C): "BE200"
        case (.tlv, 0x1E): "BE202"
        default: "controller"
        }
    }

    /// Bumble's and Linux's packing of a CNVx TOP value into four hex digits.
    static func packCNV(_ v: UInt32) -> UInt16 {
        UInt16(truncatingIfNeeded: (v & 0xF) << 12 | (v >> 4) & 0xF | ((v >> 8) & 0xF) << 4 | ((v >> 24) & 0xF) << 8)
    }

    /// `ibt-…` without the suffix: legacy `ibt-<variant>-<devrev>` (0x0B, 0x0C) or
    /// `ibt-<variant>-<hw rev>-<fw rev>`, TLV `ibt-<cnvi>-<cnvr>` (hex), as Linux names them.
    public func writeBaseName<let n: Int>(into out: inout FixedBytes<n>) {
        append("ibt-", to: &out)
        switch generation {
        case .legacy:
            appendDecimal(UInt32(variant), to: &out)
            _ = out.append(UInt8(ascii: "-"))
            if variant == 0x0B || variant == 0x0C {
                appendDecimal(UInt32(deviceRevision), to: &out)
            } else {
                appendDecimal(UInt32(hardwareRevision), to: &out)
                _ = out.append(UInt8(ascii: "-"))
                appendDecimal(UInt32(firmwareRevision), to: &out)
            }
        case .tlv:
            appendHex4(Self.packCNV(cnviTop), to: &out)
            _ = out.append(UInt8(ascii: "-"))
            appendHex4(Self.packCNV(cnvrTop), to: &out)
        }
    }
}

func le32(_ b: UnsafeRawBufferPointer, _ at: Int = 0) -> UInt32 {
    UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24
}

public enum IntelError: UInt8, Error, Equatable {
    case notIntel, unsupportedVariant, intermediateLoader, limitedCCE, unknownEngine, missingCNV
    case fileTooShort, fileTooLarge, badCSSHeader, commandOutOfBounds, unalignedEnd, emptyPayload
    case notVendorCommand, noBootAddress
    case badDDC, commandFailed, downloadRejected

    public var text: StaticString {
        switch self {
        case .notIntel: "Read Version did not describe an Intel controller"
        case .unsupportedVariant: "hardware variant not supported"
        case .intermediateLoader: "controller is in its intermediate loader (not supported)"
        case .limitedCCE: "boot loader does not acknowledge every fragment (limited CCE, not supported)"
        case .unknownEngine: "secure boot engine type missing or unknown"
        case .missingCNV: "Read Version lacks the CNVi/CNVr ids that name the firmware file"
        case .fileTooShort: "firmware file truncated (shorter than its headers)"
        case .fileTooLarge: "firmware file larger than any Intel firmware"
        case .badCSSHeader: "not an Intel firmware file for this secure boot engine (CSS header)"
        case .commandOutOfBounds: "firmware file truncated or corrupt (a command runs past its end)"
        case .unalignedEnd: "firmware file corrupt (payload does not end on a 4-byte boundary)"
        case .emptyPayload: "firmware file has no payload"
        case .notVendorCommand: "firmware file corrupt (a payload command is not a vendor command)"
        case .noBootAddress: "firmware file corrupt (no Write Boot Params command with a boot address)"
        case .badDDC: "DDC file corrupt (a record runs past its end)"
        case .commandFailed: "controller refused a vendor command"
        case .downloadRejected: "controller rejected the firmware (secure boot check failed)"
        }
    }
}

/// Where the parts of an `.sfi` file are for one secure boot engine (Linux
/// btintel.c: RSA header 644 bytes; TLV chips carry an ECDSA header after it).
public struct IntelFirmwareLayout: Equatable {
    /// (offset, length, fragment type) of the CSS header, public key and signature.
    public var sections: InlineArray<3, (offset: Int, length: Int, type: UInt8)>
    public var payloadOffset: Int
    public var bootAddress: UInt32 = 0

    public static func == (a: Self, b: Self) -> Bool {
        for i in 0..<3 where a.sections[i] != b.sections[i] { return false }
        return a.payloadOffset == b.payloadOffset && a.bootAddress == b.bootAddress
    }

    public static let maximumFileSize = 4 << 20
    static let rsaHeader = 644, ecdsaHeader = 320, cssVersionOffset = 8

    /// Checks the file for this controller and finds the boot address, before
    /// anything is sent: a truncated or corrupt file is an error, never half a download.
    public static func check(_ file: UnsafeRawBufferPointer, version: IntelVersion) throws(IntelError) -> IntelFirmwareLayout {
        guard file.count <= maximumFileSize else { throw .fileTooLarge }
        let ecdsa = version.generation == .tlv && version.secureBootEngine == 1
        var layout: IntelFirmwareLayout
        if ecdsa {
            layout = IntelFirmwareLayout(sections: [(644, 128, 0x00), (772, 96, 0x03), (868, 96, 0x02)],
                                         payloadOffset: rsaHeader + ecdsaHeader)
        } else {
            layout = IntelFirmwareLayout(sections: [(0, 128, 0x00), (128, 256, 0x03), (388, 256, 0x02)],
                                         payloadOffset: version.generation == .tlv ? rsaHeader + ecdsaHeader : rsaHeader)
        }
        guard file.count > layout.payloadOffset else { throw file.count == layout.payloadOffset ? .emptyPayload : .fileTooShort }
        // CSS header version: 0x00010000 RSA, 0x00020000 ECDSA (Linux checks the same words).
        if ecdsa {
            guard file[644] == 0x06, le32(file, 644 + cssVersionOffset) == 0x0002_0000 else { throw .badCSSHeader }
        } else {
            guard le32(file, cssVersionOffset) == 0x0001_0000 else { throw .badCSSHeader }
        }
        var at = layout.payloadOffset
        var group = 0
        var bootParams = false
        while at < file.count {
            guard file.count - at >= 3 else { throw .commandOutOfBounds }
            let opcode = UInt16(file[at]) | UInt16(file[at + 1]) << 8
            let length = Int(file[at + 2])
            guard file.count - at - 3 >= length else { throw .commandOutOfBounds }
            // The payload is vendor commands only (OGF 0x3F); anything else is a length gone wrong.
            guard opcode >> 10 == 0x3F else { throw .notVendorCommand }
            if opcode == IntelOpcode.writeBootParams {
                guard length >= 4 else { throw .noBootAddress }
                layout.bootAddress = le32(file, at + 3)
                bootParams = true
            }
            at += 3 + length
            group += 3 + length
            if group % 4 == 0 { group = 0 }
        }
        guard group == 0 else { throw .unalignedEnd }
        // Without Write Boot Params the Intel Reset would boot address 0: refuse instead.
        guard bootParams else { throw .noBootAddress }
        return layout
    }

    /// The next group of whole commands from `at` whose size is a multiple of 4
    /// (the boot loader's Secure Send data rule; the file carries NOPs for it).
    static func groupEnd(_ file: UnsafeRawBufferPointer, from at: Int) -> Int {
        var end = at
        repeat {
            end += 3 + Int(file[end + 2])
        } while (end - at) % 4 != 0
        return end
    }

    /// Checks a DDC file: records of a length byte and that many bytes, to the end.
    public static func checkDDC(_ ddc: UnsafeRawBufferPointer) throws(IntelError) -> Int {
        var at = 0, records = 0
        while at < ddc.count {
            let length = 1 + Int(ddc[at])
            guard ddc.count - at >= length, length <= 253 else { throw .badDDC }
            at += length
            records += 1
        }
        return records
    }
}

/// The download as a state machine: events in, HCI commands out (BTstack /
/// Bumble shape). Sequence: HCI Reset, Read Version (0xFF) [, Read Boot Params]
/// → files → Secure Send CSS, key, signature, data groups → vendor event
/// "download complete" → Intel Reset → vendor event "boot" → DDC records.
public struct IntelLoader {
    public enum Phase: UInt8, Equatable {
        case idle, reset, readVersion, readBootParams, awaitingFiles, secureSend, awaitDownload, awaitBoot, ddc, done, failed
    }

    public enum Step: Equatable {
        case send
        case wait
        /// The boot loader needs `<base name>.sfi` (and `.ddc` if present): call `provide`.
        case needFiles
        /// Ready for the host's bring-up; false when nothing was loaded (already operational).
        case done(loaded: Bool)
        case failed(IntelError)
    }

    public private(set) var phase: Phase = .idle
    public private(set) var version = IntelVersion()
    public private(set) var layout = IntelFirmwareLayout(sections: [(0, 0, 0), (0, 0, 0), (0, 0, 0)], payloadOffset: 0)
    public private(set) var commandsSent = 0
    public private(set) var ddcRecords = 0
    var firmware = UnsafeRawBufferPointer(start: nil, count: 0)
    var ddc = UnsafeRawBufferPointer(start: nil, count: 0)
    /// Secure Send position: section 0…2 (headers) or 3 (data groups), offset in the file,
    /// and the end of the current section or data group.
    var section = 0
    var at = 0
    var end = 0

    public static let fragmentLength = 252

    public init() {}

    /// The address Intel Reset boots: the file's Write Boot Params, except on
    /// 8260/8265 (variants 0x0B/0x0C), where Linux sends 0 (it reads the address
    /// only in a version check it skips for them) and the boot loader is content.
    public var bootAddress: UInt32 {
        version.generation == .legacy && (version.variant == 0x0B || version.variant == 0x0C) ? 0 : layout.bootAddress
    }

    /// Starts with HCI Reset: a boot loader answers Unknown Command (0x01), operational firmware success.
    public mutating func start(into packet: inout HCIPacket) -> Step {
        phase = .reset
        commandsSent = 0
        packet = .command(HCIOpcode.reset)
        packet.finishCommand()
        return .send
    }

    /// Starts at Read Version (the reset already happened, e.g. in a vendor probe).
    public mutating func startAtReadVersion(into packet: inout HCIPacket) -> Step {
        phase = .readVersion
        commandsSent = 0
        writeReadVersion(into: &packet)
        return .send
    }

    mutating func writeReadVersion(into packet: inout HCIPacket) {
        packet = .command(IntelOpcode.readVersion)
        _ = packet.append(0xFF)
        packet.finishCommand()
    }

    /// The files for `.needFiles`; both stay owned by the caller until `.done`/`.failed`.
    /// An empty DDC means none.
    public mutating func provide(firmware: UnsafeRawBufferPointer, ddc: UnsafeRawBufferPointer,
                                 into packet: inout HCIPacket) -> Step {
        guard phase == .awaitingFiles else { return fail(.commandFailed) }
        do throws(IntelError) {
            layout = try IntelFirmwareLayout.check(firmware, version: version)
            ddcRecords = try IntelFirmwareLayout.checkDDC(ddc)
        } catch {
            return fail(error)
        }
        self.firmware = firmware
        self.ddc = ddc
        phase = .secureSend
        section = 0
        at = layout.sections[0].offset
        end = at + layout.sections[0].length
        writeSecureSend(into: &packet)
        return .send
    }

    mutating func fail(_ error: IntelError) -> Step {
        phase = .failed
        firmware = UnsafeRawBufferPointer(start: nil, count: 0)
        ddc = UnsafeRawBufferPointer(start: nil, count: 0)
        return .failed(error)
    }

    mutating func finish(loaded: Bool) -> Step {
        phase = .done
        firmware = UnsafeRawBufferPointer(start: nil, count: 0)
        ddc = UnsafeRawBufferPointer(start: nil, count: 0)
        return .done(loaded: loaded)
    }

    /// One Secure Send of at most 252 bytes from the current section or group.
    mutating func writeSecureSend(into packet: inout HCIPacket) {
        let type = section < 3 ? layout.sections[section].type : 0x01
        let length = min(end - at, Self.fragmentLength)
        packet = .command(IntelOpcode.secureSend)
        _ = packet.append(type)
        _ = packet.append(UnsafeRawBufferPointer(rebasing: firmware[at..<(at + length)]))
        packet.finishCommand()
        at += length
        commandsSent += 1
    }

    /// Moves to the next section or data group; false when the whole file is sent.
    mutating func advance() -> Bool {
        if at < end { return true }
        if section < 2 {
            section += 1
            at = layout.sections[section].offset
            end = at + layout.sections[section].length
            return true
        }
        if section == 2 {
            section = 3
            at = layout.payloadOffset
        }
        guard at < firmware.count else { return false }
        end = IntelFirmwareLayout.groupEnd(firmware, from: at)
        return true
    }

    mutating func writeDDCRecord(into packet: inout HCIPacket) {
        let length = 1 + Int(ddc[at])
        packet = .command(IntelOpcode.writeDeviceConfig)
        _ = packet.append(UnsafeRawBufferPointer(rebasing: ddc[at..<(at + length)]))
        packet.finishCommand()
        at += length
        commandsSent += 1
    }

    /// An HCI event (event code, length, parameters; no H4 indicator).
    public mutating func handle(event: UnsafeRawBufferPointer, into packet: inout HCIPacket) -> Step {
        guard event.count >= 3 else { return .wait }
        if event[0] == 0xFF {
            return handleVendor(kind: event[2], event: event, into: &packet)
        }
        guard event[0] == HCIEventCode.commandComplete, event.count >= 6 else { return .wait }
        let opcode = UInt16(event[3]) | UInt16(event[4]) << 8
        let rp = UnsafeRawBufferPointer(rebasing: event[5...])
        let status = rp[0]
        switch phase {
        case .reset:
            guard opcode == HCIOpcode.reset else { return .wait }
            // 0x01 (Unknown HCI Command) is what a boot loader says; anything else but success is a failure.
            guard status == HCIStatus.success || status == 0x01 else { return fail(.commandFailed) }
            phase = .readVersion
            writeReadVersion(into: &packet)
            return .send
        case .readVersion:
            guard opcode == IntelOpcode.readVersion else { return .wait }
            guard let parsed = IntelVersion.parse(rp) else { return fail(.notIntel) }
            version = parsed
            if !parsed.inBootloader {
                return parsed.intermediate ? fail(.intermediateLoader) : finish(loaded: false)
            }
            guard parsed.isSupported else { return fail(.unsupportedVariant) }
            if parsed.generation == .legacy {
                phase = .readBootParams
                packet = .command(IntelOpcode.readBootParams)
                packet.finishCommand()
                return .send
            }
            guard parsed.limitedCCE == 0 else { return fail(.limitedCCE) }
            guard parsed.secureBootEngine <= 1 else { return fail(.unknownEngine) }
            guard parsed.hasCNVI && parsed.hasCNVR else { return fail(.missingCNV) }
            phase = .awaitingFiles
            return .needFiles
        case .readBootParams:
            guard opcode == IntelOpcode.readBootParams else { return .wait }
            guard version.applyBootParams(rp) else { return fail(.commandFailed) }
            guard version.limitedCCE == 0 else { return fail(.limitedCCE) }
            phase = .awaitingFiles
            return .needFiles
        case .secureSend:
            guard opcode == IntelOpcode.secureSend else { return .wait }
            guard status == HCIStatus.success else { return fail(.commandFailed) }
            if advance() {
                writeSecureSend(into: &packet)
                return .send
            }
            phase = .awaitDownload
            return .wait
        case .ddc:
            guard opcode == IntelOpcode.writeDeviceConfig else { return .wait }
            // Linux: the device works without its DDC, so a refused record ends the DDC, not the start.
            guard status == HCIStatus.success, at < ddc.count else { return finish(loaded: true) }
            writeDDCRecord(into: &packet)
            return .send
        case .idle, .awaitingFiles, .awaitDownload, .awaitBoot, .done, .failed:
            return .wait
        }
    }

    mutating func handleVendor(kind: UInt8, event: UnsafeRawBufferPointer, into packet: inout HCIPacket) -> Step {
        switch (phase, kind) {
        case (.awaitDownload, IntelOpcode.eventDownloadComplete), (.secureSend, IntelOpcode.eventDownloadComplete):
            // Result byte: 0 = the image passed the secure boot check.
            guard event.count >= 4, event[3] == 0 else { return fail(.downloadRejected) }
            phase = .awaitBoot
            packet = .command(IntelOpcode.reset)
            _ = packet.append(0x00)  // reset type: soft
            _ = packet.append(0x01)  // patch enable
            _ = packet.append(0x00)  // DDC reload
            _ = packet.append(0x01)  // boot option: boot address follows
            var address = bootAddress
            for _ in 0..<4 {
                _ = packet.append(UInt8(truncatingIfNeeded: address))
                address >>= 8
            }
            packet.finishCommand()
            commandsSent += 1
            return .send
        case (.awaitBoot, IntelOpcode.eventBoot):
            guard ddc.count > 0 else { return finish(loaded: true) }
            phase = .ddc
            at = 0
            writeDDCRecord(into: &packet)
            return .send
        default:
            return .wait
        }
    }
}

/// Intel USB Bluetooth controllers this loader serves (VID 0x8087; Linux btusb
/// `BTUSB_INTEL_COMBINED` entries), with the file a typical unit needs — the
/// exact one is named by Read Version at start.
public enum IntelUSB {
    public static let vendor: UInt16 = 0x8087

    public static func model(product: UInt16) -> (name: StaticString, typicalFile: StaticString)? {
        switch product {
        case 0x0A2B: ("8265", "ibt-12-16.sfi")
        case 0x0AAA: ("9460/9560", "ibt-17-16-1.sfi")
        case 0x0025: ("9160/9260", "ibt-18-16-1.sfi")
        case 0x0026: ("AX201", "ibt-19-0-4.sfi")
        case 0x0029: ("AX200", "ibt-20-1-3.sfi")
        case 0x0032: ("AX210", "ibt-0041-0041.sfi")
        case 0x0033: ("AX211", "ibt-0040-0041.sfi")
        case 0x0036: ("BE200", "ibt-0291-0291.sfi")
        default: nil
        }
    }

    public static func isKnown(vendor: UInt16, product: UInt16) -> Bool {
        vendor == Self.vendor && model(product: product) != nil
    }
}

/// The table's Intel entry: the loader behind `ChipsetDriver`. A USB dongle
/// with an Intel VID:PID starts at HCI Reset (its boot loader does not answer
/// Read Local Version); on other transports the probe hands over when Read
/// Local Version says Intel (company identifier 2).
public struct IntelDriver: ChipsetDriver {
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

    public mutating func start(context: ChipsetContext, into packet: inout HCIPacket) -> SetupStep {
        overUSB = context.overUSB
        return map(loader.start(into: &packet))
    }

    public mutating func resume(afterProbe event: UnsafeRawBufferPointer, context: ChipsetContext, into packet: inout HCIPacket) -> SetupStep {
        overUSB = context.overUSB
        return map(loader.startAtReadVersion(into: &packet))
    }

    public mutating func handle(event: UnsafeRawBufferPointer, into packet: inout HCIPacket) -> SetupStep {
        map(loader.handle(event: event, into: &packet))
    }

    public mutating func provide(firmware: UnsafeRawBufferPointer, companion: UnsafeRawBufferPointer, into packet: inout HCIPacket) -> SetupStep {
        map(loader.provide(firmware: firmware, ddc: companion, into: &packet))
    }

    /// 5 s per answer (a download is thousands of commands).
    public var answerTimeout: UInt64 { 5_000 }

    /// Over USB, Secure Send goes on bulk OUT (Linux btusb does the same).
    public var commandOnBulk: Bool { overUSB && loader.phase == .secureSend }

    /// While the loader runs over USB, bulk IN carries HCI events (btusb_recv_bulk_intel).
    public var eventsOnBulk: Bool { overUSB && loader.phase != .done && loader.phase != .failed }

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

    public var failure: StaticString { error?.text ?? "unexpected answer" }

    public func writeSummary<let n: Int>(into out: inout FixedBytes<n>) -> SummaryLevel {
        guard loaded else {
            append("operational firmware already running", to: &out)
            return .debug
        }
        append("firmware loaded (", to: &out)
        loader.version.writeBaseName(into: &out)
        append(".sfi, ", to: &out)
        appendDecimal(UInt32(loader.commandsSent), to: &out)
        append(" vendor commands, boot address 0x", to: &out)
        appendHex(loader.bootAddress, digits: 8, to: &out)
        append(", ", to: &out)
        appendDecimal(UInt32(loader.ddcRecords), to: &out)
        append(" DDC records)", to: &out)
        return .info
    }
}
