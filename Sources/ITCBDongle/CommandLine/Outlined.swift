import BLEHost
import Chipsets
import CLinux

/// What `CommandLineSettings.execute()` calls once each, kept out of it: each
/// is called from one place, so LTO inlined them all into execute(), and one
/// function that big spills more than the parts do on their own
/// (x86_64: 1.2 KB less with the first seven apart, 2026-11-28).
enum Outlined {
    /// The dongles as given, each checked to be a usb:VID:PID when read
    /// (`CommandLineSettings.dongleQueries`): no array of ids built for them.
    @inline(never)
    static func dongleQuery(_ dongles: [ArgText], json: Bool) -> Int32 {
        for argument in dongles {
            guard case .success(.usbID(let vendor, let product)) = TransportSpec.parse(argument.bytes) else { continue }
            DongleQuery.Answer(vendor: vendor, product: product).print(json: json)
        }
        return Exit.success
    }

    @inline(never)
    static func listControllers(firmwareDir: ArgText?, spec: TransportSpec) -> Int32 {
        let uart: String = if case .serial(let path, _, _) = spec { path } else { "/dev/serial1" }
        return USBController.list(firmwareDirectory: firmwareDir?.string ?? "/lib/firmware", uart: uart)
    }

    @inline(never)
    static func deviceTree(_ directory: ArgText?) -> DeviceTree { DeviceTree.load(directory?.string ?? DeviceTree.defaultDirectory) }

    @inline(never)
    static func decide(_ tree: DeviceTree) -> BoardUART { BoardUART.decide(tree) }

    @inline(never)
    static func backOff(_ transport: ArgText) -> Bool { SilentStarts.backOff(transport) }

    @inline(never)
    static func setup(_ transport: Transport, given: Bool, reset: Bool) -> VendorSetup {
        ChipsetSetup.setup(for: transport, firmwareDirectoryGiven: given, resetFirst: reset)
    }

    @inline(never)
    static func installSignals() { Signals.install() }

    @inline(never)
    static func recordSilentStart() { SilentStarts.record() }

    @inline(never)
    static func derivedAddress(role: StaticString, name: ArgText) -> BDAddress {
        derivedStaticAddress(role: UnsafeBufferPointer(start: role.utf8Start, count: role.utf8CodeUnitCount), name: name.bytes)
    }
}
