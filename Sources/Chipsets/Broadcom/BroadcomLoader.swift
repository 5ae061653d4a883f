import BLEHost

/// The patchram download as a state machine (events in, commands out).
public struct BroadcomLoader: SingleFileLoader {
    public enum Phase: UInt8, Equatable {
        case idle, awaitingFiles, minidriver, minidriverPause, records, restart, reset, resetPause, readVersion, baudRate, readAddress, done, failed
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

    /// The Linux pauses: after Download Minidriver, for the chip's restart
    /// after Launch RAM, and after the HCI Reset that follows it
    /// (`btbcm_reset`: msleep(100), "for module to complete reset process").
    public static let minidriverPause: UInt64 = 50
    public static let restartPause: UInt64 = 250
    public static let resetPause: UInt64 = 100

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
    public mutating func provide(firmware: UnsafeRawBufferPointer, into packet: inout Capacity.HCIPacket) -> SetupStep {
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
        packet.setCommand(BroadcomOpcode.downloadMinidriver)
        return .send
    }

    /// The pause after `.wait` in `minidriverPause` and `restart`.
    public var pause: UInt64 {
        switch phase {
        case .minidriverPause: Self.minidriverPause
        case .restart: Self.restartPause
        case .resetPause: Self.resetPause
        default: 0
        }
    }

    /// The pause passed: the first record, or Reset after the restart.
    public mutating func resume(into packet: inout Capacity.HCIPacket) -> SetupStep {
        switch phase {
        case .minidriverPause:
            phase = .records
            writeRecord(into: &packet)
            return .send
        case .restart:
            file = UnsafeRawBufferPointer(start: nil, count: 0)
            patched = true
            phase = .reset
            packet.setCommand(HCIOpcode.reset)
            return .send
        case .resetPause:
            phase = .readVersion
            packet.setCommand(HCIOpcode.readLocalVersion)
            return .send
        default:
            return .wait
        }
    }

    /// Out of line: one call at each of the many places the set-up ends.
    @inline(never)
    mutating func fail(_ error: BroadcomError) -> SetupStep {
        phase = .failed
        self.error = error
        file = UnsafeRawBufferPointer(start: nil, count: 0)
        return .failed
    }

    mutating func writeRecord(into packet: inout Capacity.HCIPacket) {
        let opcode = UInt16(file[at]) | UInt16(file[at + 1]) << 8
        let length = Int(file[at + 2])
        packet.startCommand(opcode)
        lastOpcode = opcode
        _ = packet.append(UnsafeRawBufferPointer(rebasing: file[(at + 3)..<(at + 3 + length)]))
        packet.finishCommand()
        at += 3 + length
        recordsSent += 1
    }

    mutating func readAddress(into packet: inout Capacity.HCIPacket) -> SetupStep {
        phase = .readAddress
        packet.setCommand(HCIOpcode.readBDAddr)
        return .send
    }

    /// An HCI event (event code, length, parameters). Only Command Completes move it.
    public mutating func handle(event: UnsafeRawBufferPointer, into packet: inout Capacity.HCIPacket) -> SetupStep {
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
            phase = .resetPause
            return .wait
        case .readVersion:
            guard opcode == HCIOpcode.readLocalVersion else { return .wait }
            guard let version = LocalVersion(commandComplete: event) else { return fail(.versionFailed) }
            patchedBuild = version.hciRevision & 0x0FFF
            // A UART at its first rate (after the restart, or never patched) goes to the target.
            let current = baudRate > 0 ? baudRate : uartBaud
            guard targetBaud > 0, targetBaud != current else { return readAddress(into: &packet) }
            phase = .baudRate
            packet.startCommand(BroadcomOpcode.updateUARTBaudRate)
            _ = packet.appendUInt16(0)
            packet.appendLE32(targetBaud)
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
        case .idle, .awaitingFiles, .minidriverPause, .restart, .resetPause, .done, .failed:
            return .wait
        }
    }
}
