import BLEHost

/// The RAM code download as a state machine (WMT events in, commands out).
public struct MediaTekLoader: SingleFileLoader {
    public enum Phase: UInt8, Equatable {
        case idle, legacyID, chipID, version, flavour, awaitingFiles, status, statusPause, chunks
        case activation, endpointReset, enable, done, failed
        /// The subsystem reset (a chip that stopped answering): its steps, the reset-done poll.
        case reset, resetPause, resetPoll, resetPollPause, resetTail
        /// After the subsystem reset: the board resets the USB port, a fresh set-up downloads.
        case portReset
        /// At a clean stop: WMT function control 0 sent (`shutdown`), then Bluetooth off.
        case disable, off
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
    /// Over USB: the answer read came back empty; after the pause it is asked again.
    var reasking = false
    /// Empty answer reads in a row (the limit), and the re-asks in all.
    var emptyReads = 0
    public private(set) var reasks = 0

    /// Linux: 100 ms between "in progress" answers (20 at most), 100 ms for the activation.
    public static let retryPause: UInt64 = 100
    public static let activationPause: UInt64 = 100
    /// Linux polls the reset-done bit every 20 ms for 1 s.
    public static let resetPollPause: UInt64 = 20
    public static let resetPolls = 50
    public static let chunk = 250
    /// Empty answer reads in a row before the steps give up: the driver's answer
    /// timeout (5 s, `MediaTekChipset.answerTimeout`) at one read per re-ask pause.
    public static let emptyReadLimit = 2_500

    public init() {}

    /// The first register read; `reset`: the subsystem reset once the chip id is known.
    public mutating func start(reset: Bool = false, into packet: inout Capacity.HCIPacket) -> SetupStep {
        resetFirst = reset
        return readRegister(MediaTekRegister.legacyID, .legacyID, into: &packet)
    }

    /// The reset's next step; after the last, the reset-done poll.
    mutating func resetStep(into packet: inout Capacity.HCIPacket) -> SetupStep {
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

    mutating func uhw(_ address: UInt32, value: UInt32?, _ next: Phase, into packet: inout Capacity.HCIPacket) -> SetupStep {
        register(value == nil ? MediaTekWMT.read : MediaTekWMT.write, address, value: value, space: MediaTekWMT.uhwSpace, next, into: &packet)
    }

    /// Out of line (as `register`): its header was inlined at each of the set-up's commands.
    @inline(never)
    static func wmt(_ operation: UInt8, flag: UInt8, length: Int, into packet: inout Capacity.HCIPacket) {
        packet = .command(MediaTekWMT.opcode)
        _ = packet.append(1)
        _ = packet.append(operation)
        _ = packet.appendUInt16(UInt16(length + 1))
        _ = packet.append(flag)
    }

    @inline(never)
    mutating func register(_ kind: UInt8, _ address: UInt32, value: UInt32?, space: UInt8, _ next: Phase, into packet: inout Capacity.HCIPacket) -> SetupStep {
        Self.wmt(MediaTekWMT.register, flag: space, length: value == nil ? 5 : 9, into: &packet)
        _ = packet.append(kind)
        packet.appendLE32(address)
        if let value { packet.appendLE32(value) }
        packet.finishCommand()
        phase = next
        return .send
    }

    mutating func readRegister(_ address: UInt32, _ next: Phase, into packet: inout Capacity.HCIPacket) -> SetupStep {
        register(MediaTekWMT.read, address, value: nil, space: MediaTekWMT.idSpace, next, into: &packet)
    }

    /// Out of line: one call at each of the many places the set-up ends.
    @inline(never)
    mutating func fail(_ error: MediaTekError) -> SetupStep {
        phase = .failed
        self.error = error
        file = UnsafeRawBufferPointer(start: nil, count: 0)
        return .failed
    }

    /// The RAM code (kept alive by the caller until `.done`/`.failed`).
    public mutating func provide(firmware: UnsafeRawBufferPointer, into packet: inout Capacity.HCIPacket) -> SetupStep {
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
    mutating func nextSection(into packet: inout Capacity.HCIPacket) -> SetupStep {
        section += 1
        while section < sections, MediaTekRAMCode.u32(file, MediaTekRAMCode.map(section) + 16) == 0 { section += 1 }
        guard section < sections else {
            phase = .activation
            return .wait
        }
        retries = 0
        return statusQuery(into: &packet)
    }

    mutating func statusQuery(into packet: inout Capacity.HCIPacket) -> SetupStep {
        let map = MediaTekRAMCode.map(section)
        Self.wmt(MediaTekWMT.patchDownload, flag: 0, length: 53, into: &packet)
        _ = packet.append(0)
        _ = packet.append(UnsafeRawBufferPointer(rebasing: file[(map + 12)..<(map + 64)]))
        packet.finishCommand()
        phase = .status
        return .send
    }

    /// The chip wants the section: its first chunk.
    mutating func loadSection(into packet: inout Capacity.HCIPacket) -> SetupStep {
        let map = MediaTekRAMCode.map(section)
        at = Int(MediaTekRAMCode.u32(file, map + 4))
        end = at + Int(MediaTekRAMCode.u32(file, map + 16))
        sectionsLoaded += 1
        return sendChunk(into: &packet)
    }

    mutating func sendChunk(into packet: inout Capacity.HCIPacket) -> SetupStep {
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

    /// A clean stop: Bluetooth off (WMT function control 0), as Linux's
    /// `btusb_mtk_shutdown` → `btmtk_usb_shutdown` (btmtk.c, 6.11 on) does at
    /// close; `.done` at once when this set-up never turned it on.
    public mutating func shutdown(into packet: inout Capacity.HCIPacket) -> SetupStep {
        guard phase == .done else { return .done }
        Self.wmt(MediaTekWMT.functionControl, flag: 0, length: 1, into: &packet)
        _ = packet.append(0)
        packet.finishCommand()
        phase = .disable
        return .send
    }

    public var pause: UInt64 { reasking ? USBVendorControl.answerReaskPause : phasePause }

    var phasePause: UInt64 {
        switch phase {
        case .statusPause: Self.retryPause
        case .activation: Self.activationPause
        case .resetPause: MediaTekResetStep.step(chip: chipID, resetIndex - 1).map { if case .pause(let ms) = $0 { ms } else { 0 } } ?? 0
        case .resetPollPause: Self.resetPollPause
        default: 0
        }
    }

    /// The pause passed: the status query again, or the endpoint reset option after the activation.
    public mutating func resume(into packet: inout Capacity.HCIPacket) -> SetupStep {
        if reasking {
            // The gap passed (btmtk_usb_wmt_recv's 500 µs): the answer is read again.
            reasking = false
            reasks += 1
            USBVendorControl.answerRead(into: &packet)
            return .send
        }
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
    public mutating func handle(event: UnsafeRawBufferPointer, into packet: inout Capacity.HCIPacket) -> SetupStep {
        guard event.count >= 1, event[0] == MediaTekWMT.event else { return .wait }
        switch phase {
        case .idle, .awaitingFiles, .statusPause, .activation, .done, .failed, .resetPause, .resetPollPause, .portReset, .off:
            return .wait
        default: break
        }
        if USBVendorControl.isNothingYet(event) {
            // Over USB the answer read came back empty: ask again after the gap the
            // chip needs (Linux btmtk_usb_wmt_recv resubmits after udelay(500)),
            // timed by the driver (`pause`), never a sleep; Linux gives up after
            // HCI_INIT_TIMEOUT, this after the same 5 s as any answer.
            emptyReads += 1
            guard emptyReads <= Self.emptyReadLimit else { return fail(.answerNeverCame) }
            reasking = true
            return .wait
        }
        emptyReads = 0
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
        case .enable, .disable:
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
            if resetSteps > 0 {
                // Linux `btusb_mtk_reset` (btusb.c, 6.11 on) queues a USB port reset
                // (`usb_queue_reset_device`) right after `btmtk_usb_subsys_reset`: the
                // device enumerates afresh and the new set-up downloads the RAM code.
                phase = .portReset
                return .resetPort
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
            // btmtk.c `btmtk_usb_hci_wmt_sync` (Linux 6.11–6.16): flag 2 is
            // "done", 1 "in progress", anything else "undone", and
            // `btmtk_setup_firmware_79xx` downloads an undone section.
            switch flag {
            case 1:
                // Still busy: ask again after the pause; after 20 Linux sends the section anyway.
                retries += 1
                if retries > 20 { return loadSection(into: &packet) }
                phase = .statusPause
                return .wait
            case 2:
                return nextSection(into: &packet)
            default:
                return loadSection(into: &packet)
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
        case .disable:
            phase = .off
            return .done
        default:
            return .wait
        }
    }
}
