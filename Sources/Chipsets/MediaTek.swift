import BLEHost

/// MediaTek MT7921 (chip id 0x7961), MT7922 and MT7925: the Bluetooth half of
/// the Wi-Fi/Bluetooth combos in mini PCs and laptops. They boot without their
/// RAM code and answer nothing useful until it is downloaded. Facts from Linux
/// `btmtk.c`/`btusb.c`; an independent, sans-IO implementation.
///
/// Sequence (over USB from the start, elsewhere after the probe's Reset and
/// Read Local Version): read the chip id (0x80000008, then 0x70010200), the
/// firmware version (0x80021004) and the flavour (0x70010020, bit 7); ask for
/// `BT_RAM_CODE_MT<id>_1[a]_<version+1>_hdr.bin`; check the whole file; for
/// each section that has bytes to load, the section status query (WMT patch
/// download, flag 0, the section map's 52 bytes), then when the chip says
/// "not there" the section in 250-byte WMT commands (flags 1 first, 2, 3
/// last); 100 ms for the activation; the endpoint reset option register; WMT
/// function control 1 (Bluetooth on). A chip whose sections are all there
/// already (warm start) gets no download.
///
/// WMT commands are HCI command 0xFC6F with a header (direction 1, operation,
/// length + 1 LE16, flag); the chip answers with vendor event 0xE4 (direction,
/// operation, length, flag, data). Register reads and writes are WMT
/// operation 8 in this program's own form (flag: 0 the id space, 1 the UHW
/// space; data: 2 read / 1 write, address LE32, value LE32) with the answer
/// (status, value LE32) after the header: over USB the board turns them into
/// the vendor control requests Linux sends (0x63 for the id space, 0x01/0x02
/// for UHW) and reads the WMT answers through control IN, on the steps'
/// behalf; over H4 (TCP, a UART) they go to the controller as they are.
public enum MediaTekWMT {
    public static let opcode: UInt16 = 0xFC6F
    public static let event: UInt8 = 0xE4
    public static let patchDownload: UInt8 = 0x01
    public static let functionControl: UInt8 = 0x06
    public static let register: UInt8 = 0x08
    /// Register spaces (the flag of a register command).
    public static let idSpace: UInt8 = 0
    public static let uhwSpace: UInt8 = 1
    public static let read: UInt8 = 2
    public static let write: UInt8 = 1
}

/// Registers Linux reads and writes.
public enum MediaTekRegister {
    public static let legacyID: UInt32 = 0x8000_0008
    public static let chipID: UInt32 = 0x7001_0200
    public static let firmwareVersion: UInt32 = 0x8002_1004
    public static let flavour: UInt32 = 0x7001_0020
    /// Endpoint reset option, written 0x00010001 after the download.
    public static let endpointResetOption: UInt32 = 0x7401_1890
    public static let endpointResetInOut: UInt32 = 0x0001_0001
    // The Bluetooth subsystem reset's registers (UHW space).
    public static let misc: UInt32 = 0x7000_2510
    public static let resetDone: UInt32 = 0x0000_0100
    public static let subsystemReset: UInt32 = 0x7000_2610
    public static let resetConnV3: UInt32 = 0x7002_8610
    public static let udmaInterrupt: UInt32 = 0x7400_0024
    public static let udmaInterrupt1: UInt32 = 0x7400_0308
    public static let watchdogStatus: UInt32 = 0x7400_03A0
}

/// One step of MediaTek's Bluetooth subsystem reset (`btmtk_usb_subsys_reset`):
/// a UHW register read or write (`last`: the value last read, its `clear` bits
/// cleared and `set` bits set), or a pause.
public enum MediaTekResetStep: Equatable {
    case read(UInt32)
    case write(UInt32, UInt32)
    case writeLast(UInt32, set: UInt32, clear: UInt32)
    case pause(UInt64)

    /// Step `index` of the reset for `chip` (its id's low 16 bits); nil past the
    /// end, after which the reset-done bit is polled.
    public static func step(chip: UInt32, _ index: Int) -> MediaTekResetStep? {
        typealias R = MediaTekRegister
        switch chip & 0xFFFF {
        case 0x7922:
            switch index {
            case 0: return .read(R.subsystemReset)
            case 1: return .writeLast(R.subsystemReset, set: 0x2020, clear: 0)
            case 2: return .write(R.endpointResetOption, R.endpointResetInOut)
            case 3: return .read(R.subsystemReset)
            case 4: return .writeLast(R.subsystemReset, set: 1, clear: 0)
            case 5: return .pause(100)
            default: return nil
            }
        case 0x7925:
            switch index {
            case 0: return .read(R.resetConnV3)
            case 1: return .writeLast(R.resetConnV3, set: 1 << 5, clear: 0)
            case 2: return .read(R.resetConnV3)
            case 3: return .writeLast(R.resetConnV3, set: 1 << 13, clear: 0xFF00)
            case 4: return .write(R.endpointResetOption, R.endpointResetInOut)
            case 5: return .read(R.resetConnV3)
            case 6: return .writeLast(R.resetConnV3, set: 1, clear: 0)
            case 7: return .write(R.udmaInterrupt, 0xFF)
            case 8: return .read(R.udmaInterrupt)
            case 9: return .write(R.udmaInterrupt1, 0xFF)
            case 10: return .read(R.udmaInterrupt1)
            case 11: return .pause(100)
            default: return nil
            }
        default:
            switch index {
            case 0: return .write(R.endpointResetOption, R.endpointResetInOut)
            case 1: return .read(R.watchdogStatus)
            case 2: return .write(R.subsystemReset, 1)
            case 3: return .write(R.udmaInterrupt, 0xFF)
            case 4: return .read(R.udmaInterrupt)
            case 5: return .write(R.udmaInterrupt1, 0xFF)
            case 6: return .read(R.udmaInterrupt1)
            // MT7921 needs 20 ms between the two writes of the reset bit.
            case 7: return .pause(20)
            case 8: return .write(R.subsystemReset, 0)
            case 9: return .read(R.subsystemReset)
            default: return nil
            }
        }
    }
}

public enum MediaTekChip {
    /// The marketing name of a chip id (low 16 bits); nil when not served.
    public static func name(id: UInt32) -> StaticString? {
        switch id & 0xFFFF {
        case 0x7961: "MT7921"
        case 0x7922: "MT7922"
        case 0x7925: "MT7925"
        default: nil
        }
    }

    /// The chip a USB dongle's VID:PID says (btusb.c's MediaTek table, and
    /// MediaTek's own VID for any product); nil when not MediaTek's.
    public static func usbChip(vendor: UInt16, product: UInt16) -> UInt16? {
        switch (UInt32(vendor) << 16) | UInt32(product) {
        case 0x0489_E0C8, 0x0489_E0CD, 0x0489_E0E0, 0x04CA_3802, 0x0E8D_0608, 0x13D3_3563, 0x13D3_3564,
             0x13D3_3567, 0x13D3_3578, 0x13D3_3583, 0x13D3_3606, 0x0E8D_7961:
            return 0x7961
        case 0x13D3_3585, 0x0489_E0D8, 0x0489_E0D9, 0x0489_E0E2, 0x0489_E0E4, 0x0489_E0F1, 0x0489_E0F2,
             0x0489_E0F5, 0x0489_E0F6, 0x0489_E102, 0x04CA_3804, 0x04CA_38E4, 0x13D3_3568, 0x13D3_3605,
             0x13D3_3607, 0x13D3_3614, 0x13D3_3615, 0x35F5_7922, 0x0E8D_0616, 0x0E8D_7922:
            return 0x7922
        case 0x0489_E113, 0x0489_E118, 0x0489_E11E, 0x13D3_3602, 0x13D3_3603, 0x13D3_3604, 0x13D3_3608,
             0x0E8D_0717, 0x0E8D_7925:
            return 0x7925
        default:
            // btusb takes every MediaTek Bluetooth interface; the id read at start names it.
            return vendor == 0x0E8D ? 0 : nil
        }
    }

    /// The file Linux asks for (`btmtk_fw_get_filename`), under `mediatek/`.
    public static func writeFileName<let n: Int>(id: UInt32, version: UInt32, flavour: Bool, into out: inout FixedBytes<n>) {
        let id = id & 0xFFFF
        if id == 0x7925 { append("mt7925/", to: &out) }
        append("BT_RAM_CODE_MT", to: &out)
        appendHex(id, digits: 4, to: &out)
        append(id == 0x7961 && flavour ? "_1a_" : "_1_", to: &out)
        var digits = 1
        let number = (version & 0xFF) + 1
        while number >> (4 * UInt32(digits)) != 0 { digits += 1 }
        appendHex(number, digits: digits, to: &out)
        append("_hdr.bin", to: &out)
    }
}

public enum MediaTekError: UInt8, Error, Equatable {
    case fileTooShort, fileTooLarge, foreignFile, badSectionCount, sectionOutside
    case registerFailed, unsupportedChip, wrongOperation, shortAnswer, sectionRefused

    public var text: StaticString {
        switch self {
        case .fileTooShort: "RAM code file truncated (shorter than its header and section map)"
        case .fileTooLarge: "RAM code file larger than any MediaTek RAM code"
        case .foreignFile: "not a MediaTek RAM code (no ALPS header)"
        case .badSectionCount: "RAM code file corrupt (no sections, or more than 32)"
        case .sectionOutside: "RAM code file truncated or corrupt (a section runs past its end)"
        case .registerFailed: "controller refused a register read or write"
        case .unsupportedChip: "unsupported MediaTek chip id"
        case .wrongOperation: "controller answered another WMT operation"
        case .shortAnswer: "controller's WMT answer cut short"
        case .sectionRefused: "controller refused a RAM code section (WMT status not 0, 1 or 2)"
        }
    }
}

/// The `_hdr.bin` format: a 32-byte header (build time, "ALPS", hardware and
/// software versions, 0xFFFFFFFF), a 64-byte global descriptor (the section
/// count at byte 12), a 64-byte map per section (type, offset, size, then the
/// 52 bytes the status query sends: load address, load size, ...).
public enum MediaTekRAMCode {
    public static let headerSize = 32
    public static let descriptorSize = 64
    public static let mapSize = 64
    /// The Debian files are 450–540 KB.
    public static let maximumFileSize = 2 * 1024 * 1024
    public static let maximumSections = 32

    static func u32(_ file: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        UInt32(file[at]) | UInt32(file[at + 1]) << 8 | UInt32(file[at + 2]) << 16 | UInt32(file[at + 3]) << 24
    }

    /// Where section `index`'s map starts.
    public static func map(_ index: Int) -> Int { headerSize + descriptorSize + mapSize * index }

    /// Checks the header and every section before anything is sent (a bad file
    /// is one error, never half a download); returns the number of sections.
    public static func check(_ file: UnsafeRawBufferPointer) throws(MediaTekError) -> Int {
        guard file.count <= maximumFileSize else { throw .fileTooLarge }
        guard file.count >= map(0) else { throw .fileTooShort }
        guard u32(file, 16) == 0x5350_4C41, u32(file, 24) == 0xFFFF_FFFF else { throw .foreignFile }
        let sections = Int(u32(file, headerSize + 12))
        guard sections > 0, sections <= maximumSections else { throw .badSectionCount }
        guard file.count >= map(sections) else { throw .fileTooShort }
        for index in 0..<sections {
            let at = map(index)
            let offset = Int(u32(file, at + 4)), size = Int(u32(file, at + 8)), load = Int(u32(file, at + 16))
            guard offset <= file.count, size <= file.count - offset, load <= size else { throw .sectionOutside }
        }
        return sections
    }
}

/// The RAM code download as a state machine (WMT events in, commands out).
public struct MediaTekLoader: SingleFileLoader {
    public enum Phase: UInt8, Equatable {
        case idle, legacyID, chipID, version, flavour, awaitingFiles, status, statusPause, chunks
        case activation, endpointReset, enable, done, failed
        /// The subsystem reset (a chip that stopped answering): its steps, the reset-done poll.
        case reset, resetPause, resetPoll, resetPollPause, resetTail
    }

    public private(set) var phase: Phase = .idle
    public private(set) var chipID: UInt32 = 0
    public private(set) var firmwareVersion: UInt32 = 0
    public private(set) var flavour = false
    public private(set) var sections = 0
    /// Sections sent (the others were there already).
    public private(set) var sectionsLoaded = 0
    public private(set) var commandsSent = 0
    public private(set) var error: MediaTekError? = nil
    var file = UnsafeRawBufferPointer(start: nil, count: 0)
    var section = 0
    var at = 0, end = 0
    var retries = 0
    /// Run the subsystem reset after the chip id is read.
    var resetFirst = false
    var resetIndex = 0
    var lastRead: UInt32 = 0
    /// The reset's steps done, and whether the chip said its reset was done.
    public private(set) var resetSteps = 0
    public private(set) var resetConfirmed = false

    /// Linux: 100 ms between "in progress" answers (20 at most), 100 ms for the activation.
    public static let retryPause: UInt64 = 100
    public static let activationPause: UInt64 = 100
    /// Linux polls the reset-done bit every 20 ms for 1 s.
    public static let resetPollPause: UInt64 = 20
    public static let resetPolls = 50
    public static let chunk = 250

    public init() {}

    /// The first register read; `reset`: the subsystem reset once the chip id is known.
    public mutating func start(reset: Bool = false, into packet: inout HCIPacket) -> SetupStep {
        resetFirst = reset
        return readRegister(MediaTekRegister.legacyID, .legacyID, into: &packet)
    }

    /// The reset's next step; after the last, the reset-done poll.
    mutating func resetStep(into packet: inout HCIPacket) -> SetupStep {
        guard let step = MediaTekResetStep.step(chip: chipID, resetIndex) else {
            retries = 0
            return uhw(MediaTekRegister.misc, value: nil, .resetPoll, into: &packet)
        }
        resetIndex += 1
        resetSteps += 1
        switch step {
        case .read(let address): return uhw(address, value: nil, .reset, into: &packet)
        case .write(let address, let value): return uhw(address, value: value, .reset, into: &packet)
        case .writeLast(let address, let set, let clear): return uhw(address, value: lastRead & ~clear | set, .reset, into: &packet)
        case .pause:
            phase = .resetPause
            return .wait
        }
    }

    mutating func uhw(_ address: UInt32, value: UInt32?, _ next: Phase, into packet: inout HCIPacket) -> SetupStep {
        register(value == nil ? MediaTekWMT.read : MediaTekWMT.write, address, value: value, space: MediaTekWMT.uhwSpace, next, into: &packet)
    }

    static func wmt(_ operation: UInt8, flag: UInt8, length: Int, into packet: inout HCIPacket) {
        packet = .command(MediaTekWMT.opcode)
        _ = packet.append(1)
        _ = packet.append(operation)
        _ = packet.appendUInt16(UInt16(length + 1))
        _ = packet.append(flag)
    }

    static func appendUInt32(_ value: UInt32, to packet: inout HCIPacket) {
        _ = packet.appendUInt16(UInt16(truncatingIfNeeded: value))
        _ = packet.appendUInt16(UInt16(truncatingIfNeeded: value >> 16))
    }

    mutating func register(_ kind: UInt8, _ address: UInt32, value: UInt32?, space: UInt8, _ next: Phase, into packet: inout HCIPacket) -> SetupStep {
        Self.wmt(MediaTekWMT.register, flag: space, length: value == nil ? 5 : 9, into: &packet)
        _ = packet.append(kind)
        Self.appendUInt32(address, to: &packet)
        if let value { Self.appendUInt32(value, to: &packet) }
        packet.finishCommand()
        phase = next
        return .send
    }

    mutating func readRegister(_ address: UInt32, _ next: Phase, into packet: inout HCIPacket) -> SetupStep {
        register(MediaTekWMT.read, address, value: nil, space: MediaTekWMT.idSpace, next, into: &packet)
    }

    mutating func fail(_ error: MediaTekError) -> SetupStep {
        phase = .failed
        self.error = error
        file = UnsafeRawBufferPointer(start: nil, count: 0)
        return .failed
    }

    /// The RAM code (kept alive by the caller until `.done`/`.failed`).
    public mutating func provide(firmware: UnsafeRawBufferPointer, into packet: inout HCIPacket) -> SetupStep {
        guard phase == .awaitingFiles else { return fail(.wrongOperation) }
        do throws(MediaTekError) {
            sections = try MediaTekRAMCode.check(firmware)
        } catch {
            return fail(error)
        }
        file = firmware
        section = -1
        return nextSection(into: &packet)
    }

    /// The status query of the next section with bytes to load, or the activation pause after the last.
    mutating func nextSection(into packet: inout HCIPacket) -> SetupStep {
        section += 1
        while section < sections, MediaTekRAMCode.u32(file, MediaTekRAMCode.map(section) + 16) == 0 { section += 1 }
        guard section < sections else {
            phase = .activation
            return .wait
        }
        retries = 0
        return statusQuery(into: &packet)
    }

    mutating func statusQuery(into packet: inout HCIPacket) -> SetupStep {
        let map = MediaTekRAMCode.map(section)
        Self.wmt(MediaTekWMT.patchDownload, flag: 0, length: 53, into: &packet)
        _ = packet.append(0)
        _ = packet.append(UnsafeRawBufferPointer(rebasing: file[(map + 12)..<(map + 64)]))
        packet.finishCommand()
        phase = .status
        return .send
    }

    /// The chip wants the section: its first chunk.
    mutating func loadSection(into packet: inout HCIPacket) -> SetupStep {
        let map = MediaTekRAMCode.map(section)
        at = Int(MediaTekRAMCode.u32(file, map + 4))
        end = at + Int(MediaTekRAMCode.u32(file, map + 16))
        sectionsLoaded += 1
        return sendChunk(into: &packet)
    }

    mutating func sendChunk(into packet: inout HCIPacket) -> SetupStep {
        let length = min(Self.chunk, end - at)
        let map = MediaTekRAMCode.map(section)
        let first = at == Int(MediaTekRAMCode.u32(file, map + 4))
        Self.wmt(MediaTekWMT.patchDownload, flag: first ? 1 : (at + length == end ? 3 : 2), length: length, into: &packet)
        _ = packet.append(UnsafeRawBufferPointer(rebasing: file[at..<(at + length)]))
        packet.finishCommand()
        at += length
        commandsSent += 1
        phase = .chunks
        return .send
    }

    public var pause: UInt64 {
        switch phase {
        case .statusPause: Self.retryPause
        case .activation: Self.activationPause
        case .resetPause: MediaTekResetStep.step(chip: chipID, resetIndex - 1).map { if case .pause(let ms) = $0 { ms } else { 0 } } ?? 0
        case .resetPollPause: Self.resetPollPause
        default: 0
        }
    }

    /// The pause passed: the status query again, or the endpoint reset option after the activation.
    public mutating func resume(into packet: inout HCIPacket) -> SetupStep {
        switch phase {
        case .statusPause: return statusQuery(into: &packet)
        case .resetPause: return resetStep(into: &packet)
        case .resetPollPause: return uhw(MediaTekRegister.misc, value: nil, .resetPoll, into: &packet)
        case .activation:
            file = UnsafeRawBufferPointer(start: nil, count: 0)
            return register(MediaTekWMT.write, MediaTekRegister.endpointResetOption, value: MediaTekRegister.endpointResetInOut,
                            space: MediaTekWMT.uhwSpace, .endpointReset, into: &packet)
        default: return .wait
        }
    }

    /// An HCI event. Only WMT events (0xE4) move it; Command Status and
    /// Command Complete for 0xFC6F are flow control and ignored, as Linux does.
    public mutating func handle(event: UnsafeRawBufferPointer, into packet: inout HCIPacket) -> SetupStep {
        guard event.count >= 1, event[0] == MediaTekWMT.event else { return .wait }
        switch phase {
        case .idle, .awaitingFiles, .statusPause, .activation, .done, .failed, .resetPause, .resetPollPause: return .wait
        default: break
        }
        guard event.count >= 7 else { return fail(.shortAnswer) }
        let operation = event[3], flag = event[6]
        var value: UInt32 = 0
        switch phase {
        case .legacyID, .chipID, .version, .flavour, .endpointReset, .reset, .resetPoll, .resetTail:
            guard operation == MediaTekWMT.register else { return fail(.wrongOperation) }
            guard event.count >= 12 else { return fail(.shortAnswer) }
            guard event[7] == 0 else { return fail(.registerFailed) }
            value = MediaTekRAMCode.u32(event, 8)
        case .status, .chunks:
            guard operation == MediaTekWMT.patchDownload else { return fail(.wrongOperation) }
        case .enable:
            guard operation == MediaTekWMT.functionControl else { return fail(.wrongOperation) }
        default: return .wait
        }
        switch phase {
        case .legacyID:
            // 0x7663 answers here; the chips served read 0 and are asked for their id.
            return readRegister(MediaTekRegister.chipID, .chipID, into: &packet)
        case .chipID:
            chipID = value
            guard MediaTekChip.name(id: value) != nil else { return fail(.unsupportedChip) }
            if resetFirst {
                resetFirst = false
                return resetStep(into: &packet)
            }
            return readRegister(MediaTekRegister.firmwareVersion, .version, into: &packet)
        case .reset:
            lastRead = value
            return resetStep(into: &packet)
        case .resetPoll:
            // Done, or 1 s of polls: Linux logs a timeout and goes on, and so does this.
            retries += 1
            resetConfirmed = value & MediaTekRegister.resetDone != 0
            guard resetConfirmed || retries >= Self.resetPolls else {
                phase = .resetPollPause
                return .wait
            }
            if chipID & 0xFFFF == 0x7922 {
                return uhw(MediaTekRegister.udmaInterrupt, value: 0xFF, .resetTail, into: &packet)
            }
            // The chip id again (as Linux reads it after the reset), then the set-up as ever.
            return readRegister(MediaTekRegister.chipID, .chipID, into: &packet)
        case .resetTail:
            return readRegister(MediaTekRegister.chipID, .chipID, into: &packet)
        case .version:
            firmwareVersion = value
            return readRegister(MediaTekRegister.flavour, .flavour, into: &packet)
        case .flavour:
            flavour = value & 0x80 != 0
            phase = .awaitingFiles
            return .needFiles
        case .status:
            switch flag {
            case 0:
                return loadSection(into: &packet)
            case 1:
                // Still busy: ask again after the pause; after 20 Linux sends the section anyway.
                retries += 1
                if retries > 20 { return loadSection(into: &packet) }
                phase = .statusPause
                return .wait
            case 2:
                return nextSection(into: &packet)
            default:
                return fail(.sectionRefused)
            }
        case .chunks:
            return at < end ? sendChunk(into: &packet) : nextSection(into: &packet)
        case .endpointReset:
            Self.wmt(MediaTekWMT.functionControl, flag: 0, length: 1, into: &packet)
            _ = packet.append(1)
            packet.finishCommand()
            phase = .enable
            return .send
        case .enable:
            phase = .done
            return .done
        default:
            return .wait
        }
    }
}

/// A vendor control request on endpoint 0 (USB 2.0 §9.3): the setup packet's
/// fields, and for an OUT request the 4 bytes it writes.
public struct USBControlRequest: Equatable, Sendable {
    public var requestType: UInt8
    public var request: UInt8
    public var value: UInt16
    public var index: UInt16
    public var length: UInt16
    public var data: UInt32

    public var isIn: Bool { requestType & 0x80 != 0 }

    /// The 8-byte setup packet, then the data of an OUT request.
    public func write(into buffer: UnsafeMutablePointer<UInt8>) -> Int {
        buffer[0] = requestType
        buffer[1] = request
        func put(_ word: UInt16, at i: Int) {
            buffer[i] = UInt8(truncatingIfNeeded: word)
            buffer[i + 1] = UInt8(truncatingIfNeeded: word >> 8)
        }
        put(value, at: 2)
        put(index, at: 4)
        put(length, at: 6)
        guard !isIn else { return 8 }
        for i in 0..<4 { buffer[8 + i] = UInt8(truncatingIfNeeded: data >> (8 * UInt32(i))) }
        return 12
    }
}

/// What the USB board does for a chipset whose quirks say `vendorControlOverUSB`
/// (MediaTek's, as Linux btusb/btmtk do it): a register command becomes a
/// vendor control request and its answer an event the steps read as if the
/// chip had sent it; any other WMT command goes as HCI and its answer is read
/// with `answerRequest`, again while it comes back empty.
public enum USBVendorControl {
    /// btmtk_usb_submit_wmt_recv_urb: vendor IN, request 1, value 0x30, 64 bytes.
    public static let answerRequest = USBControlRequest(requestType: 0xC0, request: 0x01, value: 0x30, index: 0, length: 64, data: 0)
    /// The event code of the answers.
    public static let answerEvent = MediaTekWMT.event

    /// Whether an H4 command is one whose answer is read through control IN.
    public static func answeredThroughControl(_ packet: UnsafeRawBufferPointer) -> Bool {
        packet.count >= 6 && packet[1] == UInt8(MediaTekWMT.opcode & 0xFF) && packet[2] == UInt8(MediaTekWMT.opcode >> 8)
    }

    /// The control request for a register command (H4 framed); nil for other packets.
    /// The id space is read with request 0x63 (type 0xC0), the UHW space with
    /// 0x01 (type 0xDE) and written with 0x02 (type 0x5E); value and index are
    /// the address's halves.
    public static func registerRequest(_ packet: UnsafeRawBufferPointer) -> USBControlRequest? {
        guard answeredThroughControl(packet), packet[5] == MediaTekWMT.register, packet.count >= 14 else { return nil }
        let space = packet[8], write = packet[9] == MediaTekWMT.write
        let address = MediaTekRAMCode.u32(packet, 10)
        let value = write && packet.count >= 18 ? MediaTekRAMCode.u32(packet, 14) : 0
        let type: UInt8 = write ? 0x5E : (space == MediaTekWMT.idSpace ? 0xC0 : 0xDE)
        let request: UInt8 = write ? 0x02 : (space == MediaTekWMT.idSpace ? 0x63 : 0x01)
        return USBControlRequest(requestType: type, request: request, value: UInt16(address >> 16),
                                 index: UInt16(truncatingIfNeeded: address), length: 4, data: value)
    }

    /// The answer a register command gets (the event the steps read): status 0
    /// and the value read, or status 1 when the request failed.
    public static func registerAnswer(ok: Bool, value: UInt32, into buffer: UnsafeMutablePointer<UInt8>) -> Int {
        let bytes: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (MediaTekWMT.event, 10, 2, MediaTekWMT.register, 6, 0, 0)
        withUnsafeBytes(of: bytes) { UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress!, byteCount: 7) }
        buffer[7] = ok ? 0 : 1
        for i in 0..<4 { buffer[8 + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) }
        return 12
    }
}

/// The table's MediaTek entry. USB dongles with a MediaTek VID:PID start with
/// the register reads (the chip answers nothing useful before its RAM code);
/// on other transports a controller is this chipset's when Read Local Version
/// says MediaTek (company 70).
public struct MediaTekDriver: LoaderDriver {
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

    public mutating func start(context: ChipsetContext, into packet: inout HCIPacket) -> SetupStep {
        overUSB = context.overUSB
        usbChip = MediaTekChip.usbChip(vendor: context.usbVendor, product: context.usbProduct) ?? 0
        return loader.start(reset: context.resetFirst, into: &packet)
    }

    public mutating func resume(afterProbe event: UnsafeRawBufferPointer, context: ChipsetContext, into packet: inout HCIPacket) -> SetupStep {
        start(context: context, into: &packet)
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

    public var failure: StaticString { loader.error?.text ?? "unexpected answer" }

    public func writeSummary<let n: Int>(into out: inout FixedBytes<n>) -> SummaryLevel {
        guard loader.phase == .done else { return .none }
        if loader.resetSteps > 0 {
            // Linux logs "Reset timeout" and goes on; so does this, saying so.
            append(loader.resetConfirmed ? "subsystem reset; " : "subsystem reset (not confirmed within 1 s); ", to: &out)
        }
        guard loader.sectionsLoaded > 0 else {
            append("RAM code already running; Bluetooth on", to: &out)
            return loader.resetSteps > 0 ? .info : .debug
        }
        append("RAM code loaded (", to: &out)
        appendDecimal(UInt32(loader.sectionsLoaded), to: &out)
        append(" of ", to: &out)
        appendDecimal(UInt32(loader.sections), to: &out)
        append(" sections, ", to: &out)
        appendDecimal(UInt32(loader.commandsSent), to: &out)
        append(" WMT commands); Bluetooth on", to: &out)
        return .info
    }
}
