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

/// Broadcom vendor opcodes (OGF 0x3F).
public enum BroadcomOpcode {
    /// No parameters: the ROM waits for patchram records.
    public static let downloadMinidriver: UInt16 = 0xFC2E
    /// A patchram record: address (LE32) and bytes.
    public static let writeRAM: UInt16 = 0xFC4C
    /// The last record: jump to the address (0xFFFFFFFF: the patched reset vector); the chip restarts.
    public static let launchRAM: UInt16 = 0xFC4E
    /// Parameters: 2 zero bytes, the rate (LE32). Answered at the old rate.
    public static let updateUARTBaudRate: UInt16 = 0xFC18
}

/// A chip name from Read Local Version's LMP subversion, as `btbcm.c`'s tables
/// map them (one for USB, one for UART: a few subversions name different chips).
public enum BroadcomChip {
    public static func name(lmpSubversion: UInt16, overUSB: Bool) -> StaticString? {
        overUSB ? usbName(lmpSubversion) : uartName(lmpSubversion)
    }

    static func uartName(_ subversion: UInt16) -> StaticString? {
        switch subversion {
        case 0x1111: "BCM4362A2"
        case 0x4103: "BCM4330B1"
        case 0x410D: "BCM4334B0"
        case 0x410E: "BCM43341B0"
        case 0x4204: "BCM2076B1"
        case 0x4406: "BCM4324B3"
        case 0x4606: "BCM4324B5"
        case 0x6109: "BCM4335C0"
        case 0x610C: "BCM4354"
        case 0x2122: "BCM4343A0"
        case 0x2209: "BCM43430A1"
        case 0x6119: "BCM4345C0"
        case 0x6606: "BCM4345C5"
        case 0x230F: "BCM4356A2"
        case 0x220E: "BCM20702A1"
        case 0x4217: "BCM4329B1"
        case 0x6106: "BCM4359C0"
        case 0x4106: "BCM4335A0"
        case 0x410C: "BCM43430B0"
        case 0x2119: "BCM4373A0"
        default: nil
        }
    }

    static func usbName(_ subversion: UInt16) -> StaticString? {
        switch subversion {
        case 0x2105: "BCM20703A1"
        case 0x210B: "BCM43142A0"
        case 0x2112: "BCM4314A0"
        case 0x2118: "BCM20702A0"
        case 0x2126: "BCM4335A0"
        case 0x220E: "BCM20702A1"
        case 0x230F: "BCM4356A2"
        case 0x4106: "BCM4335B0"
        case 0x410E: "BCM20702B0"
        case 0x6109: "BCM4335C0"
        case 0x610C: "BCM4354"
        case 0x6607: "BCM4350C5"
        default: nil
        }
    }

    /// Company identifiers: Broadcom 15, Cypress Semiconductor 305.
    public static func isBroadcom(manufacturer: UInt16) -> Bool { manufacturer == 15 || manufacturer == 305 }

    /// Addresses whole models share (`btbcm.c`'s list, where the kernel marks
    /// them "no address", and the Pi 3B+'s), as `BDAddress.value` (most
    /// significant byte first in text).
    public static func isDefault(_ address: UInt64) -> Bool {
        switch address {
        case 0x0020_7002_A000,  // BCM20702A0
             0x2070_02A0_0000,  // BCM20702A1
             0x2076_A000_5679,  // BCM2076B1
             0x4343_A012_1FAC,  // BCM43430A0
             0xAAAA_AAAA_AAAA,  // BCM43430A1 (Raspberry Pi 3B+, Zero 2 W)
             0x4324_B300_0000,  // BCM4324B3
             0x4330_B100_0000,  // BCM4330B1
             0x4334_B000_0000,  // BCM4334B0
             0x4345_C500_1FAC,  // BCM4345C5 (Raspberry Pi 4, 5, CM4)
             // Not in btbcm.c (on a Pi, Linux sets the board's address from the
             // device tree), but every Pi 3B+ reports it: BCM4345C0.
             0x4345_C000_1FAC,
             0x4334_1B00_1FAC,  // BCM43341B
             0x4384_B000_7693:  // BCM4384B0
            true
        default:
            false
        }
    }

    /// USB dongles served (Linux btusb matches Broadcom's vendor id and OEM
    /// dongles built on BCM20702): VID 0a5c, and the OEM IDs below.
    public static func isKnownUSB(vendor: UInt16, product: UInt16) -> Bool {
        if vendor == 0x0A5C { return true }
        switch (UInt32(vendor) << 16) | UInt32(product) {
        case 0x0B05_17B5,  // ASUS USB-BT400
             0x413C_8197,  // Dell DW380
             0x050D_065A,  // Belkin F8T065BF
             0x0489_E031:  // Foxconn (BCM20702)
            return true
        default:
            return false
        }
    }
}

public enum BroadcomError: UInt8, Error, Equatable {
    case emptyFile, fileTooLarge, truncatedRecord, notVendorCommand, noLaunchRAM
    case commandFailed, versionFailed, baudRateRefused

    public var text: StaticString {
        switch self {
        case .emptyFile: "patchram file is empty"
        case .fileTooLarge: "patchram file larger than any Broadcom patch"
        case .truncatedRecord: "patchram file truncated or corrupt (a record runs past its end)"
        case .notVendorCommand: "patchram file corrupt (a record is not a vendor command)"
        case .noLaunchRAM: "patchram file corrupt (its last record is not Launch RAM)"
        case .commandFailed: "controller refused a patchram command"
        case .versionFailed: "controller did not answer Read Local Version after the restart"
        case .baudRateRefused: "controller refused Update UART Baud Rate"
        }
    }
}

/// The `.hcd` format: records of opcode (LE16), parameter length (1 byte),
/// parameters, to the end of the file.
public enum BroadcomPatchram {
    /// The Pi's files are 30–64 KB.
    public static let maximumFileSize = 512 * 1024

    /// Checks every record before anything is sent (a bad file is one error,
    /// never half a download); returns the number of records.
    public static func check(_ file: UnsafeRawBufferPointer) throws(BroadcomError) -> Int {
        guard file.count > 0 else { throw .emptyFile }
        guard file.count <= maximumFileSize else { throw .fileTooLarge }
        var at = 0, records = 0, last: UInt16 = 0
        while at < file.count {
            guard file.count - at >= 3 else { throw .truncatedRecord }
            let opcode = UInt16(file[at]) | UInt16(file[at + 1]) << 8
            let length = Int(file[at + 2])
            guard file.count - at - 3 >= length else { throw .truncatedRecord }
            guard opcode >> 10 == 0x3F else { throw .notVendorCommand }
            last = opcode
            at += 3 + length
            records += 1
        }
        guard last == BroadcomOpcode.launchRAM else { throw .noLaunchRAM }
        return records
    }
}

/// The patchram download as a state machine (events in, commands out).
public struct BroadcomLoader: SingleFileLoader {
    public enum Phase: UInt8, Equatable {
        case idle, awaitingFiles, minidriver, minidriverPause, records, restart, reset, readVersion, baudRate, readAddress, done, failed
    }

    public private(set) var phase: Phase = .idle
    /// The chip's name from the probe's Read Local Version.
    public private(set) var chip: StaticString = "BCM"
    public private(set) var manufacturer: UInt16 = 15
    public private(set) var romBuild: UInt16 = 0
    public private(set) var patchedBuild: UInt16 = 0
    public private(set) var records = 0
    public private(set) var recordsSent = 0
    /// The patchram was sent (false: none was found and the ROM runs as it is).
    public private(set) var patched = false
    /// Why the download failed (after `.failed`).
    public private(set) var error: BroadcomError? = nil
    /// The controller's address when it is one of the shared defaults.
    public private(set) var sharedDefaultAddress: BDAddress? = nil
    /// The UART rate the port must be at (0: unchanged): 115200 after the
    /// restart, the target after Update UART Baud Rate.
    public private(set) var baudRate: UInt32 = 0
    var targetBaud: UInt32 = 0
    /// The port's rate when the set-up began (0: not a UART).
    var uartBaud: UInt32 = 0
    public static let uartStartBaud: UInt32 = 115_200
    var file = UnsafeRawBufferPointer(start: nil, count: 0)
    var at = 0
    var lastOpcode: UInt16 = 0

    /// The Linux pauses: after Download Minidriver, and for the chip's restart after Launch RAM.
    public static let minidriverPause: UInt64 = 50
    public static let restartPause: UInt64 = 250

    public init() {}

    /// The probe's Read Local Version named this chip: ask for its file.
    public mutating func begin(chip: StaticString, version: LocalVersion, uartBaud: UInt32 = 0, targetBaud: UInt32) -> SetupStep {
        self.chip = chip
        self.uartBaud = uartBaud
        manufacturer = version.manufacturer
        romBuild = version.hciRevision & 0x0FFF
        self.targetBaud = targetBaud
        phase = .awaitingFiles
        return .needFiles
    }

    /// The `.hcd` file (kept alive by the caller until `.done`/`.failed`); no
    /// bytes at all (nil base) when there is none and the ROM may run as it is.
    public mutating func provide(firmware: UnsafeRawBufferPointer, into packet: inout HCIPacket) -> SetupStep {
        guard phase == .awaitingFiles else { return fail(.commandFailed) }
        guard firmware.baseAddress != nil else { return readAddress(into: &packet) }
        do throws(BroadcomError) {
            records = try BroadcomPatchram.check(firmware)
        } catch {
            return fail(error)
        }
        file = firmware
        at = 0
        recordsSent = 0
        phase = .minidriver
        packet = .command(BroadcomOpcode.downloadMinidriver)
        packet.finishCommand()
        return .send
    }

    /// The pause after `.wait` in `minidriverPause` and `restart`.
    public var pause: UInt64 {
        switch phase {
        case .minidriverPause: Self.minidriverPause
        case .restart: Self.restartPause
        default: 0
        }
    }

    /// The pause passed: the first record, or Reset after the restart.
    public mutating func resume(into packet: inout HCIPacket) -> SetupStep {
        switch phase {
        case .minidriverPause:
            phase = .records
            writeRecord(into: &packet)
            return .send
        case .restart:
            file = UnsafeRawBufferPointer(start: nil, count: 0)
            patched = true
            phase = .reset
            packet = .command(HCIOpcode.reset)
            packet.finishCommand()
            return .send
        default:
            return .wait
        }
    }

    mutating func fail(_ error: BroadcomError) -> SetupStep {
        phase = .failed
        self.error = error
        file = UnsafeRawBufferPointer(start: nil, count: 0)
        return .failed
    }

    mutating func writeRecord(into packet: inout HCIPacket) {
        let opcode = UInt16(file[at]) | UInt16(file[at + 1]) << 8
        let length = Int(file[at + 2])
        packet = .command(opcode)
        lastOpcode = opcode
        _ = packet.append(UnsafeRawBufferPointer(rebasing: file[(at + 3)..<(at + 3 + length)]))
        packet.finishCommand()
        at += 3 + length
        recordsSent += 1
    }

    mutating func readAddress(into packet: inout HCIPacket) -> SetupStep {
        phase = .readAddress
        packet = .command(HCIOpcode.readBDAddr)
        packet.finishCommand()
        return .send
    }

    /// An HCI event (event code, length, parameters). Only Command Completes move it.
    public mutating func handle(event: UnsafeRawBufferPointer, into packet: inout HCIPacket) -> SetupStep {
        guard event.count >= 6, event[0] == HCIEventCode.commandComplete else { return .wait }
        let opcode = UInt16(event[3]) | UInt16(event[4]) << 8
        let status = event[5]
        switch phase {
        case .minidriver:
            guard opcode == BroadcomOpcode.downloadMinidriver else { return .wait }
            guard status == HCIStatus.success else { return fail(.commandFailed) }
            phase = .minidriverPause
            return .wait
        case .records:
            guard opcode == lastOpcode else { return .wait }
            guard status == HCIStatus.success else { return fail(.commandFailed) }
            if at < file.count {
                writeRecord(into: &packet)
                return .send
            }
            // Launch RAM answered: the chip restarts into the patch, silently,
            // with its UART back at its first rate.
            phase = .restart
            if uartBaud > 0 { baudRate = Self.uartStartBaud }
            return .wait
        case .reset:
            guard opcode == HCIOpcode.reset else { return .wait }
            guard status == HCIStatus.success else { return fail(.commandFailed) }
            phase = .readVersion
            packet = .command(HCIOpcode.readLocalVersion)
            packet.finishCommand()
            return .send
        case .readVersion:
            guard opcode == HCIOpcode.readLocalVersion else { return .wait }
            guard let version = LocalVersion(commandComplete: event) else { return fail(.versionFailed) }
            patchedBuild = version.hciRevision & 0x0FFF
            // A UART at its first rate (after the restart, or never patched) goes to the target.
            let current = baudRate > 0 ? baudRate : uartBaud
            guard targetBaud > 0, targetBaud != current else { return readAddress(into: &packet) }
            phase = .baudRate
            packet = .command(BroadcomOpcode.updateUARTBaudRate)
            _ = packet.appendUInt16(0)
            var rate = targetBaud
            for _ in 0..<4 {
                _ = packet.append(UInt8(truncatingIfNeeded: rate))
                rate >>= 8
            }
            packet.finishCommand()
            return .send
        case .baudRate:
            guard opcode == BroadcomOpcode.updateUARTBaudRate else { return .wait }
            guard status == HCIStatus.success else { return fail(.baudRateRefused) }
            // The answer came at the old rate; the port follows before the next command.
            baudRate = targetBaud
            return readAddress(into: &packet)
        case .readAddress:
            guard opcode == HCIOpcode.readBDAddr else { return .wait }
            if status == HCIStatus.success, event.count >= 12 {
                var reader = ByteReader(UnsafeRawBufferPointer(rebasing: event[6..<12]))
                let address = BDAddress(reader: &reader, type: 0)
                if BroadcomChip.isDefault(address.value) { sharedDefaultAddress = address }
            }
            phase = .done
            return .done
        case .idle, .awaitingFiles, .minidriverPause, .restart, .done, .failed:
            return .wait
        }
    }
}

/// The table's Broadcom/Cypress entry. USB dongles with a Broadcom VID:PID
/// are probed; on any transport a controller is this chipset's when Read Local
/// Version says Broadcom (15) or Cypress (305) with a subversion `btbcm.c` names.
public struct BroadcomDriver: LoaderDriver {
    public var loader = BroadcomLoader()
    var context = ChipsetContext()

    public init() {}

    public static let info = ChipsetInfo(
        vendor: "Broadcom", directory: "brcm", package: "bluez-firmware (component non-free-firmware)",
        maximumFileSize: BroadcomPatchram.maximumFileSize, setupName: "patchram download", failureVerb: "patchram download failed",
        quirks: ChipsetQuirks(runsFromROMOverUSB: true, probedOnEveryUART: true))

    public static func usbStart(vendor: UInt16, product: UInt16) -> USBStart? {
        BroadcomChip.isKnownUSB(vendor: vendor, product: product) ? .probe : nil
    }

    /// The model is learnt from Read Local Version; the file Linux looks for first on a BCM20702A1.
    public static func usbModel<let n: Int>(vendor: UInt16, product: UInt16, model: inout FixedBytes<n>, file: inout FixedBytes<n>) -> Bool {
        guard BroadcomChip.isKnownUSB(vendor: vendor, product: product) else { return false }
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

    public mutating func resume(afterProbe event: UnsafeRawBufferPointer, context: ChipsetContext, into packet: inout HCIPacket) -> SetupStep {
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

    /// `BCM<chip>.hcd`; over USB first `BCM<chip>-<vid>-<pid>.hcd` (Linux's names).
    public func files(_ request: inout FileRequest) {
        if context.overUSB {
            append(loader.chip, to: &request.firmware)
            append("-", to: &request.firmware)
            appendHex(UInt32(context.usbVendor), digits: 4, to: &request.firmware)
            append("-", to: &request.firmware)
            appendHex(UInt32(context.usbProduct), digits: 4, to: &request.firmware)
            append(".hcd", to: &request.firmware)
            append(loader.chip, to: &request.alternative)
            append(".hcd", to: &request.alternative)
        } else {
            append(loader.chip, to: &request.firmware)
            append(".hcd", to: &request.firmware)
        }
        request.optional = context.overUSB && Self.info.quirks.runsFromROMOverUSB
    }

    public var failure: StaticString { loader.error?.text ?? "unexpected answer" }

    public func writeSummary<let n: Int>(into out: inout FixedBytes<n>) -> SummaryLevel {
        guard loader.phase == .done, loader.patched else { return .none }
        append("patchram loaded (", to: &out)
        appendDecimal(UInt32(loader.records), to: &out)
        append(" records, build ", to: &out)
        appendDecimal(UInt32(loader.romBuild), to: &out)
        append(" -> ", to: &out)
        appendDecimal(UInt32(loader.patchedBuild), to: &out)
        if loader.baudRate > 0 {
            append(", UART at ", to: &out)
            appendDecimal(loader.baudRate, to: &out)
            append(" baud", to: &out)
        }
        append(")", to: &out)
        return .info
    }
}
