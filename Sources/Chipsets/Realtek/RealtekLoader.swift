import BLEHost

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
    public mutating func resume(afterReadLocalVersion event: UnsafeRawBufferPointer, into packet: inout Capacity.HCIPacket) -> Step {
        phase = .readLocalVersion
        chip = nil
        fragmentsSent = 0
        return handle(event: event, into: &packet)
    }

    public mutating func start(into packet: inout Capacity.HCIPacket) -> Step {
        phase = .reset
        chip = nil
        fragmentsSent = 0
        packet.setCommand(HCIOpcode.reset)
        return .send
    }

    /// The files for `.needFiles`: both stay owned (and alive) by the caller
    /// until `.done`/`.failed`. An empty config means none.
    public mutating func provide(firmware: UnsafeRawBufferPointer, config: UnsafeRawBufferPointer,
                                 into packet: inout Capacity.HCIPacket) -> Step {
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
        packet.setCommand(RealtekOpcode.readROMVersion)
        return .send
    }

    /// Out of line: one call at each of the many places the set-up ends.
    @inline(never)
    mutating func fail(_ error: RealtekError) -> Step {
        phase = .failed
        firmware = UnsafeRawBufferPointer(start: nil, count: 0)
        config = UnsafeRawBufferPointer(start: nil, count: 0)
        return .failed(error)
    }

    /// An HCI event (event code, length, parameters; no H4 indicator).
    public mutating func handle(event: UnsafeRawBufferPointer, into packet: inout Capacity.HCIPacket) -> Step {
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
            packet.setCommand(HCIOpcode.readLocalVersion)
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
            packet.setCommand(RealtekOpcode.readROMVersion)
            return .send
        case .readROMVersionAfter:
            guard opcode == RealtekOpcode.readROMVersion else { return .wait }
            if status == HCIStatus.success, rest.count >= 1 { romVersionAfter = rest[0] }
            phase = .finalReset
            packet.setCommand(HCIOpcode.reset)
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

    mutating func writeFragment(into packet: inout Capacity.HCIPacket) {
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
