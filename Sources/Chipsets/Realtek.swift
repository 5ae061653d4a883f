import BLEHost

/// Realtek Bluetooth controllers (RTL8723B/D, RTL8761B/BU, RTL8821C, RTL8822B/C,
/// RTL8852A/B/C, …) boot from ROM and need a patch (and for some a config blob)
/// downloaded by vendor HCI commands before they behave as the LMP version they
/// ship as. The protocol is the one documented by Linux `btrtl.c` and Bumble
/// `bumble/drivers/rtk.py`; this is an independent, sans-IO implementation.
///
/// The platform reads the files; everything here works on the caller's bytes
/// and keeps only offsets into them.

/// Realtek vendor opcodes (OGF 0x3F).
public enum RealtekOpcode {
    /// Returns status, ROM version (one byte).
    public static let readROMVersion: UInt16 = 0xFC6D
    /// Parameters: index (bit 7 = last fragment), up to 252 bytes. Returns status, index.
    public static let download: UInt16 = 0xFC20
}

/// A Realtek chip family, matched from Read Local Version Information of the
/// un-patched ROM (LMP subversion, HCI revision, HCI version).
public enum RealtekChip: UInt8 {
    case rtl8723b, rtl8723d, rtl8821a, rtl8821c, rtl8761a, rtl8761bu, rtl8761cu
    case rtl8822b, rtl8822c, rtl8852a, rtl8852b, rtl8852c

    /// Every chip, for tables (raw values are dense from 0).
    public static let count = 12

    /// The ROM's LMP subversion (the "ROM id" shared by a family).
    public var romLMPSubversion: UInt16 {
        switch self {
        case .rtl8723b, .rtl8723d: 0x8723
        case .rtl8821a, .rtl8821c: 0x8821
        case .rtl8761a, .rtl8761bu, .rtl8761cu: 0x8761
        case .rtl8822b, .rtl8822c: 0x8822
        case .rtl8852a, .rtl8852b, .rtl8852c: 0x8852
        }
    }

    /// HCI revision and HCI version of the ROM; version 0 matches any.
    public var romHCI: (revision: UInt16, version: UInt8) {
        switch self {
        case .rtl8723b: (0x0B, 0x06)
        case .rtl8723d: (0x0D, 0x08)
        case .rtl8821a: (0x0A, 0x06)
        case .rtl8821c: (0x0C, 0x08)
        case .rtl8761a: (0x0A, 0x06)
        case .rtl8761bu: (0x0B, 0x0A)
        case .rtl8761cu: (0x0E, 0x00)
        case .rtl8822b: (0x0B, 0x07)
        case .rtl8822c: (0x0C, 0x0A)
        case .rtl8852a: (0x0A, 0x0B)
        case .rtl8852b: (0x0B, 0x0B)
        case .rtl8852c: (0x0C, 0x0C)
        }
    }

    /// The chip refuses to run without its config file.
    public var configRequired: Bool {
        switch self {
        case .rtl8723d, .rtl8822b: true
        default: false
        }
    }

    public var name: StaticString {
        switch self {
        case .rtl8723b: "RTL8723B"
        case .rtl8723d: "RTL8723D"
        case .rtl8821a: "RTL8821A"
        case .rtl8821c: "RTL8821C"
        case .rtl8761a: "RTL8761A"
        case .rtl8761bu: "RTL8761B/BU"
        case .rtl8761cu: "RTL8761CU"
        case .rtl8822b: "RTL8822B"
        case .rtl8822c: "RTL8822C"
        case .rtl8852a: "RTL8852A"
        case .rtl8852b: "RTL8852B"
        case .rtl8852c: "RTL8852C"
        }
    }

    /// File under `<firmware dir>/rtl_bt/` (Debian package firmware-realtek).
    public var firmwareFile: StaticString {
        switch self {
        case .rtl8723b: "rtl8723b_fw.bin"
        case .rtl8723d: "rtl8723d_fw.bin"
        case .rtl8821a: "rtl8821a_fw.bin"
        case .rtl8821c: "rtl8821c_fw.bin"
        case .rtl8761a: "rtl8761a_fw.bin"
        case .rtl8761bu: "rtl8761bu_fw.bin"
        case .rtl8761cu: "rtl8761cu_fw.bin"
        case .rtl8822b: "rtl8822b_fw.bin"
        case .rtl8822c: "rtl8822cu_fw.bin"
        case .rtl8852a: "rtl8852au_fw.bin"
        case .rtl8852b: "rtl8852bu_fw.bin"
        case .rtl8852c: "rtl8852cu_fw.bin"
        }
    }

    public var configFile: StaticString {
        switch self {
        case .rtl8723b: "rtl8723b_config.bin"
        case .rtl8723d: "rtl8723d_config.bin"
        case .rtl8821a: "rtl8821a_config.bin"
        case .rtl8821c: "rtl8821c_config.bin"
        case .rtl8761a: "rtl8761a_config.bin"
        case .rtl8761bu: "rtl8761bu_config.bin"
        case .rtl8761cu: "rtl8761cu_config.bin"
        case .rtl8822b: "rtl8822b_config.bin"
        case .rtl8822c: "rtl8822cu_config.bin"
        case .rtl8852a: "rtl8852au_config.bin"
        case .rtl8852b: "rtl8852bu_config.bin"
        case .rtl8852c: "rtl8852cu_config.bin"
        }
    }

    /// The chip of an un-patched ROM, or nil (not Realtek, or already patched:
    /// a patched controller reports the patch's subversion instead).
    public static func match(lmpSubversion: UInt16, hciRevision: UInt16, hciVersion: UInt8) -> RealtekChip? {
        var raw: UInt8 = 0
        while let chip = RealtekChip(rawValue: raw) {
            raw += 1
            guard chip.romLMPSubversion == lmpSubversion else { continue }
            let hci = chip.romHCI
            if hci.revision == hciRevision && (hci.version == hciVersion || hci.version == 0) { return chip }
        }
        return nil
    }

    /// The ROM LMP subversion an epatch project id is built for (nil: unknown id).
    public static func romLMPSubversion(projectID: UInt8) -> UInt16? {
        switch projectID {
        case 1, 9: 0x8723
        case 2, 10: 0x8821
        case 3, 14, 51: 0x8761
        case 8, 13: 0x8822
        case 18, 20, 25: 0x8852
        default: nil
        }
    }

    /// USB VID:PID pairs of known Realtek Bluetooth adapters (Linux btusb / Bumble list).
    public static func isKnownUSB(vendor: UInt16, product: UInt16) -> Bool {
        if vendor == 0x0BDA {
            switch product {
            case 0x8771, 0x877B, 0xA728, 0xA729, 0xB009, 0xB00C, 0xC822, 0xC123,
                 0x2852, 0x385A, 0x4852, 0xC852, 0x887B, 0xC761:
                return true
            default: return false
            }
        }
        switch (UInt32(vendor) << 16) | UInt32(product) {
        case 0x0B05_190E, 0x2230_0016, 0x2357_0604, 0x2550_8761, 0x2B89_8761, 0x2C0A_8761,
             0x7392_C611, 0x7392_A611, 0x7392_F611, 0x0B05_1BF6, 0x13D3_3529, 0x13D3_3549,
             0x0B05_185C, 0x13D3_3526, 0x04C5_161F, 0x04CA_4005, 0x0B05_18EF, 0x0CB5_C547,
             0x1358_C123, 0x13D3_3548, 0x13D3_3553, 0x13D3_3555, 0x2FF8_3051, 0x2FF8_B011,
             0x04C5_165C, 0x04CA_4006, 0x0CB8_C549, 0x0CB8_C559, 0x13D3_3571, 0x04C5_1675,
             0x04CA_4007, 0x0CB8_C558, 0x13D3_3586, 0x13D3_3587, 0x13D3_3592:
            return true
        default:
            return false
        }
    }
}

/// Why a patch file or a download was refused. Every malformed input ends here.
public enum RealtekError: UInt8, Error, Equatable {
    case fileTooShort, fileTooLarge, unknownSignature
    case missingExtensionSignature, badExtensionInstruction, projectIDNotFound, projectMismatch
    case tableOutOfBounds, patchOutOfBounds, patchTooShort, noPatchForROMVersion
    case v2BadSection, v2NoPatch
    case configBadMagic, configTruncated, payloadTooLarge
    case commandFailed, unexpectedEvent, configMissing

    public var text: StaticString {
        switch self {
        case .fileTooShort: "firmware file truncated"
        case .fileTooLarge: "firmware file larger than any Realtek patch"
        case .unknownSignature: "not a Realtek patch (no Realtech/RTBTCore signature)"
        case .missingExtensionSignature: "extension signature missing at the end"
        case .badExtensionInstruction: "corrupt extension section"
        case .projectIDNotFound: "project id missing from the extension section"
        case .projectMismatch: "patch is for another chip (project id does not match)"
        case .tableOutOfBounds: "patch table runs past the end of the file"
        case .patchOutOfBounds: "patch runs past the end of the file"
        case .patchTooShort: "patch shorter than its trailer"
        case .noPatchForROMVersion: "no patch for this ROM version"
        case .v2BadSection: "corrupt section in v2 patch"
        case .v2NoPatch: "no patch for this ROM version in v2 file"
        case .configBadMagic: "config file has a bad magic"
        case .configTruncated: "config file truncated"
        case .payloadTooLarge: "patch and config exceed the download limit"
        case .commandFailed: "controller refused a vendor command"
        case .unexpectedEvent: "unexpected event during firmware download"
        case .configMissing: "config file required but missing"
        }
    }
}

/// The bytes to download: up to `maxSegments` ranges of the file in order
/// (v1: one patch, v2: the selected sub-sections by priority), then an
/// optional 4-byte little-endian trailer (v1: the file's firmware version
/// replaces the patch's last 4 bytes), then the config file.
public struct RealtekPayload {
    public static let maxSegments = 8
    var segmentStart: InlineArray<8, Int> = InlineArray(repeating: 0)
    var segmentLength: InlineArray<8, Int> = InlineArray(repeating: 0)
    public private(set) var segmentCount = 0
    public var hasTrailer = false
    public var trailer: UInt32 = 0
    public var configLength = 0
    public var firmwareVersion: UInt32 = 0
    public var projectID: UInt8 = 0

    public init() {}

    /// File offset of the first range.
    public var start: Int { segmentCount > 0 ? segmentStart[0] : 0 }
    /// The file's bytes in the payload (all ranges).
    public var bodyLength: Int {
        var total = 0
        for i in 0..<segmentCount { total += segmentLength[i] }
        return total
    }
    public var patchLength: Int { bodyLength + (hasTrailer ? 4 : 0) }
    public var totalLength: Int { patchLength + configLength }

    public func segment(_ i: Int) -> (start: Int, length: Int) { (segmentStart[i], segmentLength[i]) }

    /// Appends a range; false when all slots are taken.
    mutating func append(start: Int, length: Int) -> Bool {
        insert(start: start, length: length, at: segmentCount)
    }

    mutating func insert(start: Int, length: Int, at index: Int) -> Bool {
        guard segmentCount < Self.maxSegments else { return false }
        var i = segmentCount
        while i > index {
            segmentStart[i] = segmentStart[i - 1]
            segmentLength[i] = segmentLength[i - 1]
            i -= 1
        }
        segmentStart[index] = start
        segmentLength[index] = length
        segmentCount += 1
        return true
    }

    /// Byte `index` of the concatenated payload.
    public func byte(at index: Int, file: UnsafeRawBufferPointer, config: UnsafeRawBufferPointer) -> UInt8 {
        var i = index
        for s in 0..<segmentCount {
            if i < segmentLength[s] { return file[segmentStart[s] + i] }
            i -= segmentLength[s]
        }
        if hasTrailer {
            if i < 4 { return UInt8(truncatingIfNeeded: trailer >> UInt32(8 * i)) }
            i -= 4
        }
        return config[i]
    }
}

public enum RealtekPatchFile {
    /// Larger than any known patch (rtl8852cu_fw.bin is 107 KB).
    public static let maximumFileSize = 1 << 20
    /// Download indices wrap after 128 fragments; keep well inside what ROMs accept.
    public static let maximumPayload = 256 * 1024
    public static let configMagic: UInt32 = 0x8723_AB55

    static let v1Signature: StaticString = "Realtech"
    static let v2Signature: StaticString = "RTBTCore"
    static let v1HeaderSize = 14

    static func hasPrefix(_ file: UnsafeRawBufferPointer, _ signature: StaticString) -> Bool {
        let n = signature.utf8CodeUnitCount
        guard file.count >= n else { return false }
        let s = signature.utf8Start
        for i in 0..<n where file[i] != s[i] { return false }
        return true
    }

    static func u16(_ b: UnsafeRawBufferPointer, _ at: Int) -> UInt16 {
        UInt16(b[at]) | UInt16(b[at + 1]) << 8
    }

    static func u32(_ b: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24
    }

    public enum Format: Equatable { case v1, v2 }

    public static func format(_ file: UnsafeRawBufferPointer) throws(RealtekError) -> Format {
        if hasPrefix(file, v1Signature) { return .v1 }
        if hasPrefix(file, v2Signature) { return .v2 }
        if file.count < 8 { throw .fileTooShort }
        throw .unknownSignature
    }

    /// The project id from the extension section at the end of a v1 file:
    /// instructions read backwards from before the signature 51 04 FD 77, each
    /// `data…, length, opcode`; opcode 0 with length 1 is the project id, 0xFF ends.
    public static func projectID(_ file: UnsafeRawBufferPointer) throws(RealtekError) -> UInt8 {
        let n = file.count
        guard n >= v1HeaderSize + 4 else { throw .fileTooShort }
        guard file[n - 4] == 0x51, file[n - 3] == 0x04, file[n - 2] == 0xFD, file[n - 1] == 0x77 else {
            throw .missingExtensionSignature
        }
        var offset = n - 4
        while offset >= v1HeaderSize + 2 {
            let opcode = file[offset - 1]
            let length = Int(file[offset - 2])
            offset -= 2
            if opcode == 0xFF { break }
            if length == 0 { throw .badExtensionInstruction }
            if opcode == 0 && length == 1 { return file[offset - 1] }
            offset -= length
        }
        throw .projectIDNotFound
    }

    /// Parses an epatch v1 file ("Realtech", version u32, patch count u16, then
    /// chip ids u16[n], lengths u16[n], offsets u32[n]) and selects the patch
    /// whose chip id is `romVersion + 1`.
    public static func parseV1(_ file: UnsafeRawBufferPointer, romVersion: UInt8,
                               expectedROM: UInt16?) throws(RealtekError) -> RealtekPayload {
        guard file.count <= maximumFileSize else { throw .fileTooLarge }
        guard hasPrefix(file, v1Signature) else {
            throw file.count < 8 ? .fileTooShort : .unknownSignature
        }
        guard file.count >= v1HeaderSize + 4 else { throw .fileTooShort }
        let project = try projectID(file)
        if let expectedROM {
            guard RealtekChip.romLMPSubversion(projectID: project) == expectedROM else { throw .projectMismatch }
        }
        let version = u32(file, 8)
        let count = Int(u16(file, 12))
        guard v1HeaderSize + 8 * count <= file.count else { throw .tableOutOfBounds }
        let want = UInt16(romVersion) &+ 1
        for i in 0..<count {
            let chipID = u16(file, v1HeaderSize + 2 * i)
            guard chipID == want else { continue }
            let length = Int(u16(file, v1HeaderSize + 2 * count + 2 * i))
            let offset = Int(u32(file, v1HeaderSize + 4 * count + 4 * i))
            guard offset <= file.count, length <= file.count - offset else { throw .patchOutOfBounds }
            guard length >= 8 else { throw .patchTooShort }
            var payload = RealtekPayload()
            _ = payload.append(start: offset, length: length - 4)
            payload.hasTrailer = true
            payload.trailer = version
            payload.firmwareVersion = version
            payload.projectID = project
            return payload
        }
        throw .noPatchForROMVersion
    }

    /// Parses an epatch v2 file: "RTBTCore", firmware version (8 bytes, the
    /// low 4 kept), section count u32, then sections (opcode u32, length u32,
    /// data); the last 7 bytes of the file are a tail outside the sections.
    /// Sections 0x01 (patch snippets), 0x02 (dummy header) and 0x03 (security
    /// header) hold a count u16, a reserved u16 and sub-sections (eco u8,
    /// priority u8, key id u8 / reserved, reserved u8, length u32, data). The
    /// sub-sections with eco == `romVersion + 1` (security headers also with the
    /// controller's key id; none without one) are the payload, in ascending
    /// priority, a later one before an earlier one of equal priority (btrtl's
    /// order). No trailer is patched in.
    public static func parseV2(_ file: UnsafeRawBufferPointer, romVersion: UInt8,
                               keyID: UInt8? = nil) throws(RealtekError) -> RealtekPayload {
        guard file.count <= maximumFileSize else { throw .fileTooLarge }
        guard hasPrefix(file, v2Signature) else {
            throw file.count < 8 ? .fileTooShort : .unknownSignature
        }
        guard file.count >= 20 + 7 else { throw .fileTooShort }
        let end = file.count - 7
        let version = u32(file, 8)
        let sections = Int(u32(file, 16))
        var offset = 20
        let want = UInt8(truncatingIfNeeded: Int(romVersion) + 1)
        var payload = RealtekPayload()
        payload.firmwareVersion = version
        var priorities: InlineArray<8, UInt8> = InlineArray(repeating: 0)
        var index = 0
        while index < sections {
            guard end - offset >= 8 else { throw .v2BadSection }
            let opcode = u32(file, offset)
            let length = Int(u32(file, offset + 4))
            offset += 8
            guard length <= end - offset else { throw .v2BadSection }
            if opcode == 0x01 || opcode == 0x02 || opcode == 0x03 {
                guard length >= 4 else { throw .v2BadSection }
                let count = Int(u16(file, offset))
                var at = offset + 4
                let sectionEnd = offset + length
                for _ in 0..<count {
                    guard sectionEnd - at >= 8 else { throw .v2BadSection }
                    let eco = file[at]
                    let priority = file[at + 1]
                    let key = file[at + 2]
                    let subLength = Int(u32(file, at + 4))
                    at += 8
                    guard subLength <= sectionEnd - at else { throw .v2BadSection }
                    if eco == want && (opcode != 0x03 || keyID == key) {
                        var slot = 0
                        while slot < payload.segmentCount && priorities[slot] < priority { slot += 1 }
                        guard payload.insert(start: at, length: subLength, at: slot) else { throw .v2BadSection }
                        var i = payload.segmentCount - 1
                        while i > slot { priorities[i] = priorities[i - 1]; i -= 1 }
                        priorities[slot] = priority
                    }
                    at += subLength
                }
            }
            offset += length
            index += 1
        }
        guard payload.segmentCount > 0 else { throw .v2NoPatch }
        return payload
    }

    /// Checks a config file (magic 0x8723AB55, u16 data length, then entries of
    /// offset u16, length u8, data) and returns the bytes to append (all of it).
    public static func checkConfig(_ config: UnsafeRawBufferPointer) throws(RealtekError) -> Int {
        guard config.count >= 6 else { throw .configTruncated }
        guard u32(config, 0) == configMagic else { throw .configBadMagic }
        let length = Int(u16(config, 4))
        guard length <= config.count - 6 else { throw .configTruncated }
        var at = 6
        let end = 6 + length
        while at < end {
            guard end - at >= 3 else { throw .configTruncated }
            let entry = Int(config[at + 2])
            at += 3
            guard entry <= end - at else { throw .configTruncated }
            at += entry
        }
        return config.count
    }
}

/// Firmware download as a sans-IO state machine. It emits one HCI command at
/// a time into the caller's packet and consumes the HCI events the controller
/// answers with. The command sequence is Bumble's rtk driver's: Reset, Read
/// Local Version; then for an un-patched Realtek ROM: Read ROM Version,
/// Download ×n (252-byte fragments), Read ROM Version, Reset.
public struct RealtekLoader {
    public enum Phase: UInt8, Equatable {
        case idle, reset, readLocalVersion, awaitingFiles, readROMVersion, download, readROMVersionAfter, finalReset, done, failed
    }

    public enum Step: Equatable {
        /// A command is in the packet: send it.
        case send
        /// Nothing to do until the next event.
        case wait
        /// Read Local Version says this un-patched chip: call `provide(firmware:config:into:)`.
        case needFiles(RealtekChip)
        /// The controller is ready for the host's own bring-up (chip nil: nothing was loaded).
        case done(RealtekChip?)
        case failed(RealtekError)
    }

    public private(set) var phase: Phase = .idle
    public private(set) var chip: RealtekChip?
    public private(set) var romVersion: UInt8 = 0
    public private(set) var romVersionAfter: UInt8 = 0
    public private(set) var payload = RealtekPayload()
    public private(set) var fragmentsSent = 0
    public private(set) var lastStatus: UInt8 = 0
    /// Company identifier from Read Local Version (another vendor's loader may take over).
    public private(set) var manufacturer: UInt16 = 0
    var firmware = UnsafeRawBufferPointer(start: nil, count: 0)
    var config = UnsafeRawBufferPointer(start: nil, count: 0)
    var configLength = 0

    public static let fragmentLength = 252

    public init() {}

    public var fragmentCount: Int { (payload.totalLength + Self.fragmentLength - 1) / Self.fragmentLength }

    /// Download index of fragment `i`: 0…127, then 1…128 style wrap as Linux
    /// btrtl (`(i & 0x7F) + 1` past 127); bit 7 marks the last fragment.
    public static func downloadIndex(_ i: Int, count: Int) -> UInt8 {
        var index = i > 0x7F ? UInt8((i & 0x7F) + 1) : UInt8(i)
        if i == count - 1 { index |= 0x80 }
        return index
    }

    /// Enters at Read Local Version's answer (the probe sent Reset and Read Local Version).
    public mutating func resume(afterReadLocalVersion event: UnsafeRawBufferPointer, into packet: inout HCIPacket) -> Step {
        phase = .readLocalVersion
        chip = nil
        fragmentsSent = 0
        return handle(event: event, into: &packet)
    }

    public mutating func start(into packet: inout HCIPacket) -> Step {
        phase = .reset
        chip = nil
        fragmentsSent = 0
        packet = .command(HCIOpcode.reset)
        packet.finishCommand()
        return .send
    }

    /// The files for `.needFiles`: both stay owned (and alive) by the caller
    /// until `.done`/`.failed`. An empty config means none.
    public mutating func provide(firmware: UnsafeRawBufferPointer, config: UnsafeRawBufferPointer,
                                 into packet: inout HCIPacket) -> Step {
        guard phase == .awaitingFiles, let chip else { return fail(.unexpectedEvent) }
        do throws(RealtekError) {
            _ = try RealtekPatchFile.format(firmware)
            if config.count > 0 {
                configLength = try RealtekPatchFile.checkConfig(config)
            } else {
                configLength = 0
                if chip.configRequired { throw .configMissing }
            }
        } catch {
            return fail(error)
        }
        self.firmware = firmware
        self.config = config
        phase = .readROMVersion
        packet = .command(RealtekOpcode.readROMVersion)
        packet.finishCommand()
        return .send
    }

    mutating func fail(_ error: RealtekError) -> Step {
        phase = .failed
        firmware = UnsafeRawBufferPointer(start: nil, count: 0)
        config = UnsafeRawBufferPointer(start: nil, count: 0)
        return .failed(error)
    }

    /// An HCI event (event code, length, parameters; no H4 indicator).
    public mutating func handle(event: UnsafeRawBufferPointer, into packet: inout HCIPacket) -> Step {
        guard event.count >= 2 else { return .wait }
        // Only Command Complete moves the download; other events (a stray
        // Command Status, vendor events) are ignored, as Bumble and Linux do.
        guard event[0] == HCIEventCode.commandComplete, event.count >= 6 else { return .wait }
        let opcode = UInt16(event[3]) | UInt16(event[4]) << 8
        let status = event[5]
        lastStatus = status
        let rest = UnsafeRawBufferPointer(rebasing: event[6...])
        switch phase {
        case .reset:
            guard opcode == HCIOpcode.reset else { return .wait }
            phase = .readLocalVersion
            packet = .command(HCIOpcode.readLocalVersion)
            packet.finishCommand()
            return .send
        case .readLocalVersion:
            guard opcode == HCIOpcode.readLocalVersion else { return .wait }
            guard status == HCIStatus.success, rest.count >= 8 else { return fail(.commandFailed) }
            let hciVersion = rest[0]
            let hciRevision = UInt16(rest[1]) | UInt16(rest[2]) << 8
            let lmpSubversion = UInt16(rest[6]) | UInt16(rest[7]) << 8
            manufacturer = UInt16(rest[4]) | UInt16(rest[5]) << 8
            guard let found = RealtekChip.match(lmpSubversion: lmpSubversion, hciRevision: hciRevision,
                                                hciVersion: hciVersion) else {
                phase = .done
                return .done(nil)
            }
            chip = found
            phase = .awaitingFiles
            return .needFiles(found)
        case .readROMVersion:
            guard opcode == RealtekOpcode.readROMVersion else { return .wait }
            guard status == HCIStatus.success, rest.count >= 1 else { return fail(.commandFailed) }
            romVersion = rest[0]
            do throws(RealtekError) {
                var selected: RealtekPayload
                switch try RealtekPatchFile.format(firmware) {
                case .v1: selected = try RealtekPatchFile.parseV1(firmware, romVersion: romVersion,
                                                                 expectedROM: chip?.romLMPSubversion)
                case .v2: selected = try RealtekPatchFile.parseV2(firmware, romVersion: romVersion)
                }
                selected.configLength = configLength
                guard selected.totalLength <= RealtekPatchFile.maximumPayload else { throw .payloadTooLarge }
                payload = selected
            } catch {
                return fail(error)
            }
            phase = .download
            fragmentsSent = 0
            writeFragment(into: &packet)
            return .send
        case .download:
            guard opcode == RealtekOpcode.download else { return .wait }
            guard status == HCIStatus.success else { return fail(.commandFailed) }
            if fragmentsSent < fragmentCount {
                writeFragment(into: &packet)
                return .send
            }
            phase = .readROMVersionAfter
            packet = .command(RealtekOpcode.readROMVersion)
            packet.finishCommand()
            return .send
        case .readROMVersionAfter:
            guard opcode == RealtekOpcode.readROMVersion else { return .wait }
            if status == HCIStatus.success, rest.count >= 1 { romVersionAfter = rest[0] }
            phase = .finalReset
            packet = .command(HCIOpcode.reset)
            packet.finishCommand()
            return .send
        case .finalReset:
            guard opcode == HCIOpcode.reset else { return .wait }
            guard status == HCIStatus.success else { return fail(.commandFailed) }
            phase = .done
            firmware = UnsafeRawBufferPointer(start: nil, count: 0)
            config = UnsafeRawBufferPointer(start: nil, count: 0)
            return .done(chip)
        case .idle, .awaitingFiles, .done, .failed:
            return .wait
        }
    }

    mutating func writeFragment(into packet: inout HCIPacket) {
        let count = fragmentCount
        let i = fragmentsSent
        packet = .command(RealtekOpcode.download)
        _ = packet.append(Self.downloadIndex(i, count: count))
        let from = i * Self.fragmentLength
        let to = min(from + Self.fragmentLength, payload.totalLength)
        var at = from
        while at < to {
            _ = packet.append(payload.byte(at: at, file: firmware, config: config))
            at += 1
        }
        // Every fragment is 252 bytes: the last is padded with zeros, as Bumble's
        // driver sends it (Linux sends the exact remainder; ROMs accept both).
        _ = packet.appendZeros(Self.fragmentLength - (to - from))
        packet.finishCommand()
        fragmentsSent += 1
    }
}

/// The table's Realtek entry: the loader behind `ChipsetDriver`. USB dongles
/// with a Realtek VID:PID are probed (Reset, Read Local Version); any other
/// transport's controller is this chipset's when Read Local Version names an
/// un-patched Realtek ROM.
public struct RealtekDriver: ChipsetDriver {
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
        let chip = RealtekChip.likely(vendor: vendor, product: product)
        append(chip.name, to: &model)
        append(chip.firmwareFile, to: &file)
        return true
    }

    public static func recognises(_ version: LocalVersion, context: ChipsetContext) -> Bool {
        RealtekChip.match(lmpSubversion: version.lmpSubversion, hciRevision: version.hciRevision, hciVersion: version.hciVersion) != nil
    }

    public mutating func resume(afterProbe event: UnsafeRawBufferPointer, context: ChipsetContext, into packet: inout HCIPacket) -> SetupStep {
        map(loader.resume(afterReadLocalVersion: event, into: &packet))
    }

    public mutating func handle(event: UnsafeRawBufferPointer, into packet: inout HCIPacket) -> SetupStep {
        map(loader.handle(event: event, into: &packet))
    }

    public mutating func provide(firmware: UnsafeRawBufferPointer, companion: UnsafeRawBufferPointer, into packet: inout HCIPacket) -> SetupStep {
        map(loader.provide(firmware: firmware, config: companion, into: &packet))
    }

    /// 10 s per answer.
    public var answerTimeout: UInt64 { 10_000 }

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

    public var failure: StaticString { error?.text ?? "unexpected answer" }

    public func writeSummary<let n: Int>(into out: inout FixedBytes<n>) -> SummaryLevel {
        guard loader.chip != nil, loader.phase == .done else { return .none }
        append("firmware loaded (version 0x", to: &out)
        appendHex(loader.payload.firmwareVersion, digits: 8, to: &out)
        append(", ", to: &out)
        appendDecimal(UInt32(loader.fragmentCount), to: &out)
        append(" fragments, ROM version ", to: &out)
        appendDecimal(UInt32(loader.romVersion), to: &out)
        append(")", to: &out)
        return .info
    }
}

extension RealtekChip {
    /// The chip most likely behind a Realtek VID:PID.
    public static func likely(vendor: UInt16, product: UInt16) -> RealtekChip {
        switch (UInt32(vendor) << 16) | UInt32(product) {
        case 0x0BDA_B009, 0x2FF8_B011, 0x7392_A611: .rtl8723d
        case 0x0BDA_B00C, 0x13D3_3529: .rtl8821c
        case 0x0B05_185C, 0x13D3_3526: .rtl8822b
        case 0x04C5_161F, 0x04CA_4005, 0x0B05_18EF, 0x0BDA_C123, 0x0BDA_C822, 0x0CB5_C547, 0x1358_C123,
             0x13D3_3548, 0x13D3_3549, 0x13D3_3553, 0x13D3_3555, 0x2FF8_3051: .rtl8822c
        case 0x04C5_165C, 0x04CA_4006, 0x0BDA_2852, 0x0BDA_385A, 0x0BDA_4852, 0x0BDA_C852, 0x0CB8_C549: .rtl8852a
        case 0x0BDA_887B, 0x0CB8_C559, 0x13D3_3571: .rtl8852b
        case 0x04C5_1675, 0x04CA_4007, 0x0CB8_C558, 0x13D3_3586, 0x13D3_3587, 0x13D3_3592: .rtl8852c
        case 0x0B05_1BF6, 0x0BDA_C761, 0x7392_F611: .rtl8761cu
        default: .rtl8761bu
        }
    }
}
