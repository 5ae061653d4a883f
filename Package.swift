// swift-tools-version: 6.2
import PackageDescription

// Borrowed reads of the core's state stay in place (docs/ARCHITECTURE.md, "State in place").
let inPlace: [SwiftSetting] = [.enableExperimentalFeature("AddressableParameters"), .enableExperimentalFeature("RawLayout")]

let package = Package(
    name: "itcb-dongle",
    products: [
        .executable(name: "itcb-dongle", targets: ["ITCBDongle"]),
        // Build time only: the man page and the shell completion from the option table.
        .executable(name: "itcb-dongle-docs", targets: ["ITCBDongleDocs"]),
    ],
    targets: [
        // Sans-IO BLE host core: HCI, L2CAP, ATT/GATT, GAP, SMP refusal.
        // Foundation-free, fixed-size buffers; also compiled as Embedded Swift
        // with -no-allocations by scripts/embedded-check.sh.
        // RawLayout: the zero-byte InPlacePin that keeps the big containers in
        // place (Sources/BLEHost/Buffers/InPlace.swift); AddressableParameters: the
        // @_addressableSelf left on small Copyable buffers (FixedBytes).
        .target(name: "BLEHost", swiftSettings: inPlace),
        // The 8-Ball game: GATT table, peripheral policy, central session.
        .target(name: "EightBall", dependencies: ["BLEHost"],
                swiftSettings: inPlace),
        // The chipset drivers of the Linux board: one table (ChipsetTable.swift, a line
        // per chipset), one folder per chipset (Realtek, Intel, Broadcom/Cypress,
        // MediaTek: USB IDs, recognition, loader, files) and `VendorSetup` (the plan and the probe, asking the
        // table). Sans-IO like the core, and Embedded-clean
        // (scripts/embedded-check.sh), but not part of the MCU firmware, whose
        // controller needs no download. The driver runs them through the core's
        // `ControllerSetup` protocol, as BTstack runs a `chipset/` driver.
        .target(name: "Chipsets", dependencies: ["BLEHost"],
                swiftSettings: inPlace),
        // libusb-1.0 through pkg-config (Debian: libusb-1.0-0-dev).
        .systemLibrary(
            name: "CLibUSB",
            pkgConfig: "libusb-1.0",
            providers: [.apt(["libusb-1.0-0-dev"])]
        ),
        // The libc the platform layer uses (poll, unistd, fcntl, signal, termios,
        // sockets, getopt_long), with shims for what Swift cannot import as it is
        // (errno, variadic open/fcntl, SIG_IGN); no Glibc, so the same sources
        // also build as Embedded Swift (scripts/build-embedded.sh).
        .systemLibrary(name: "CLinux"),
        // Platform layer: poll(2) run loop, transports, btsnoop, CLI (getopt_long
        // over one option table: Sources/ITCBDongle/CommandLine/Options.swift).
        // Release builds drop the run-time exclusivity checks: every access to
        // the USB transport's state (a class, reached from libusb's callbacks)
        // would pay one, ~2,000 instructions per question; debug builds and the
        // tests keep them.
        // The command line's one option table: the program's parser and --help, and
        // the build-time man page and completion (ITCBDongleDocs) are made from it.
        // --firmware-dir's help names the chipset table's folders.
        .target(name: "ITCBOptions", dependencies: ["Chipsets"]),
        .executableTarget(name: "ITCBDongleDocs", dependencies: ["ITCBOptions"]),
        .executableTarget(
            name: "ITCBDongle",
            dependencies: [
                "BLEHost", "EightBall", "Chipsets", "ITCBOptions", "CLibUSB", "CLinux",
            ],
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))],
            // Double's rounding (Glibc's import brought libm along).
            linkerSettings: [.linkedLibrary("m")]
        ),
        // A scripted controller that drives a Host in tests (public API only).
        .target(name: "TestSupport", dependencies: ["BLEHost"], path: "Tests/SwiftSupport"),
        .testTarget(name: "BLEHostTests", dependencies: ["BLEHost", "TestSupport"]),
        .testTarget(name: "ChipsetsTests", dependencies: ["Chipsets", "BLEHost", "TestSupport"]),
        .testTarget(name: "EightBallTests", dependencies: ["EightBall", "BLEHost", "TestSupport"]),
        .testTarget(name: "ITCBDongleTests", dependencies: ["ITCBDongle", "ITCBDongleDocs", "ITCBOptions", "BLEHost", "Chipsets", "CLibUSB"]),
    ]
)
