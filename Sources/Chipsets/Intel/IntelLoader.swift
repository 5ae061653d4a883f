import BLEHost

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
    public mutating func start(into packet: inout Capacity.HCIPacket) -> Step {
        phase = .reset
        commandsSent = 0
        packet.setCommand(HCIOpcode.reset)
        return .send
    }

    /// Starts at Read Version (the reset already happened, e.g. in a vendor probe).
    public mutating func startAtReadVersion(into packet: inout Capacity.HCIPacket) -> Step {
        phase = .readVersion
        commandsSent = 0
        writeReadVersion(into: &packet)
        return .send
    }

    mutating func writeReadVersion(into packet: inout Capacity.HCIPacket) {
        packet = .command(IntelOpcode.readVersion)
        _ = packet.append(0xFF)
        packet.finishCommand()
    }

    /// The files for `.needFiles`; both stay owned by the caller until `.done`/`.failed`.
    /// An empty DDC means none.
    public mutating func provide(firmware: UnsafeRawBufferPointer, ddc: UnsafeRawBufferPointer,
                                 into packet: inout Capacity.HCIPacket) -> Step {
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

    /// Out of line: one call at each of the many places the set-up ends.
    @inline(never)
    mutating func fail(_ error: IntelError) -> Step {
        phase = .failed
        firmware = UnsafeRawBufferPointer(start: nil, count: 0)
        ddc = UnsafeRawBufferPointer(start: nil, count: 0)
        return .failed(error)
    }

    /// Out of line: one call at each of the many places the set-up ends.
    @inline(never)
    mutating func finish(loaded: Bool) -> Step {
        phase = .done
        firmware = UnsafeRawBufferPointer(start: nil, count: 0)
        ddc = UnsafeRawBufferPointer(start: nil, count: 0)
        return .done(loaded: loaded)
    }

    /// One Secure Send of at most 252 bytes from the current section or group.
    mutating func writeSecureSend(into packet: inout Capacity.HCIPacket) {
        let type = section < 3 ? layout.sections[section].type : 0x01
        let length = min(end - at, Self.fragmentLength)
        packet.startCommand(IntelOpcode.secureSend)
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

    mutating func writeDDCRecord(into packet: inout Capacity.HCIPacket) {
        let length = 1 + Int(ddc[at])
        packet.startCommand(IntelOpcode.writeDeviceConfig)
        _ = packet.append(UnsafeRawBufferPointer(rebasing: ddc[at..<(at + length)]))
        packet.finishCommand()
        at += length
        commandsSent += 1
    }

    /// An HCI event (event code, length, parameters; no H4 indicator).
    public mutating func handle(event: UnsafeRawBufferPointer, into packet: inout Capacity.HCIPacket) -> Step {
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
                packet.setCommand(IntelOpcode.readBootParams)
                return .send
            }
            guard parsed.limitedCCE == 0 else { return fail(.limitedCCE) }
            guard parsed.secureBootEngine <= 1 else { return fail(.unknownEngine) }
            guard parsed.hasCNVI && parsed.hasCNVR else { return fail(.missingCNV) }
            // Variant 0x1e and later: Linux loads `ibt-<cnvi>-<cnvr>-iml.sfi` here, boots it,
            // reads the version again and loads the firmware the loader names
            // (`btintel_bootloader_setup_tlv`). Not that step yet: refused, with the
            // file's name, rather than the plain-named file sent to the boot loader.
            guard !parsed.bootsIntermediateLoader else { return fail(.intermediateLoaderStep) }
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

    mutating func handleVendor(kind: UInt8, event: UnsafeRawBufferPointer, into packet: inout Capacity.HCIPacket) -> Step {
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
