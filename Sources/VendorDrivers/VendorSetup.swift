import BLEHost

/// The Realtek and Intel firmware downloads as one set-up: a USB dongle is
/// known by its VID:PID; on a UART or virtual controller the Realtek probe
/// (Reset, Read Local Version) runs first and hands over to the Intel loader
/// when the manufacturer is Intel (2).
public struct VendorSetup: ControllerSetup {
    public enum Plan: Equatable {
        /// Nothing to load.
        case none
        /// The Realtek probe, then Intel when the controller says it is one.
        case probe
        /// An Intel USB dongle: the Intel loader from HCI Reset on.
        case intel
    }

    public enum Vendor: Equatable { case none, realtek, intel }

    public let plan: Plan
    /// USB: the Intel boot loader takes Secure Send on bulk OUT and answers on bulk IN.
    public let overUSB: Bool
    public private(set) var vendor = Vendor.none
    public var realtek = RealtekLoader()
    public var intel = IntelLoader()
    var packet = HCIPacket()
    /// The Realtek probe ended and the Intel loader took over (no download by Realtek).
    public private(set) var intelAfterProbe = false
    /// Why the download failed, by vendor.
    public private(set) var realtekError: RealtekError? = nil
    public private(set) var intelError: IntelError? = nil
    /// The Intel loader downloaded firmware (false: it was already running).
    public private(set) var intelLoaded = false

    public init(plan: Plan, overUSB: Bool) {
        self.plan = plan
        self.overUSB = overUSB
    }

    public mutating func begin() -> SetupStep {
        switch plan {
        case .none: return .done
        case .probe:
            vendor = .realtek
            return map(realtek.start(into: &packet))
        case .intel:
            vendor = .intel
            return map(intel.start(into: &packet))
        }
    }

    public mutating func handle(event: UnsafeRawBufferPointer) -> SetupStep {
        switch vendor {
        case .none: return .done
        case .realtek: return map(realtek.handle(event: event, into: &packet))
        case .intel: return map(intel.handle(event: event, into: &packet))
        }
    }

    public mutating func provide(firmware: UnsafeRawBufferPointer, companion: UnsafeRawBufferPointer) -> SetupStep {
        switch vendor {
        case .none: return .done
        case .realtek: return map(realtek.provide(firmware: firmware, config: companion, into: &packet))
        case .intel: return map(intel.provide(firmware: firmware, ddc: companion, into: &packet))
        }
    }

    public mutating func command(into packet: inout HCIPacket) { packet = self.packet }

    /// Realtek: 10 s per answer; Intel: 5 s (a download is thousands of commands).
    public var answerTimeout: UInt64 { vendor == .intel ? 5_000 : 10_000 }

    /// The command goes on the bulk OUT endpoint (Intel Secure Send over USB; Linux btusb does the same).
    public var commandOnBulk: Bool { overUSB && vendor == .intel && intel.phase == .secureSend }

    /// While the Intel loader runs over USB, bulk IN carries HCI events (btusb_recv_bulk_intel).
    public var eventsOnBulk: Bool { overUSB && vendor == .intel && intel.phase != .done && intel.phase != .failed }

    mutating func map(_ step: RealtekLoader.Step) -> SetupStep {
        switch step {
        case .send: return .send
        case .wait: return .wait
        case .needFiles: return .needFiles
        case .failed(let error):
            realtekError = error
            return .failed
        case .done:
            // Realtek's probe found an Intel controller (not over USB: there the VID:PID decides).
            if plan == .probe, !overUSB, realtek.manufacturer == 2 {
                vendor = .intel
                intelAfterProbe = true
                return map(intel.startAtReadVersion(into: &packet))
            }
            return .done
        }
    }

    mutating func map(_ step: IntelLoader.Step) -> SetupStep {
        switch step {
        case .send: return .send
        case .wait: return .wait
        case .needFiles: return .needFiles
        case .done(let loaded):
            intelLoaded = loaded
            return .done
        case .failed(let error):
            intelError = error
            return .failed
        }
    }
}
