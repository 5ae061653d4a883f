// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "itcb-dongle",
    products: [
        .executable(name: "itcb-dongle", targets: ["ITCBDongle"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // Sans-IO BLE host core: HCI, L2CAP, ATT/GATT, GAP, SMP refusal.
        // Foundation-free, fixed-size buffers; also compiled as Embedded Swift
        // with -no-allocations by scripts/embedded-check.sh.
        // AddressableParameters: @_addressableSelf keeps borrowed reads of the
        // InlineArray-backed state in place (without it Swift 6.3 copies the array).
        .target(name: "BLEHost", swiftSettings: [.enableExperimentalFeature("AddressableParameters")]),
        // The 8-Ball game: GATT table, peripheral policy, central session.
        .target(name: "EightBall", dependencies: ["BLEHost"],
                swiftSettings: [.enableExperimentalFeature("AddressableParameters")]),
        // Vendor set-up steps for the Linux board: the Realtek and Intel firmware
        // loaders, their USB ID tables and `VendorSetup` (the Realtek probe with
        // its hand-over to Intel). Sans-IO like the core, and Embedded-clean
        // (scripts/embedded-check.sh), but not part of the MCU firmware, whose
        // controller needs no download. The driver runs them through the core's
        // `ControllerSetup` protocol, as BTstack runs a `chipset/` driver.
        .target(name: "VendorDrivers", dependencies: ["BLEHost"],
                swiftSettings: [.enableExperimentalFeature("AddressableParameters")]),
        // libusb-1.0 through pkg-config (Debian: libusb-1.0-0-dev).
        .systemLibrary(
            name: "CLibUSB",
            pkgConfig: "libusb-1.0",
            providers: [.apt(["libusb-1.0-0-dev"])]
        ),
        // Platform layer: poll(2) run loop, transports, btsnoop, CLI.
        // Release builds drop the run-time exclusivity checks: every access to
        // the USB transport's state (a class, reached from libusb's callbacks)
        // would pay one, ~2,000 instructions per question; debug builds and the
        // tests keep them.
        .executableTarget(
            name: "ITCBDongle",
            dependencies: [
                "BLEHost", "EightBall", "VendorDrivers", "CLibUSB",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
        ),
        // A scripted controller that drives a Host in tests (public API only).
        .target(name: "TestSupport", dependencies: ["BLEHost"], path: "Tests/TestSupport"),
        .testTarget(name: "BLEHostTests", dependencies: ["BLEHost", "TestSupport"]),
        .testTarget(name: "VendorDriversTests", dependencies: ["VendorDrivers", "BLEHost", "TestSupport"]),
        .testTarget(name: "EightBallTests", dependencies: ["EightBall", "BLEHost", "TestSupport"]),
        .testTarget(name: "ITCBDongleTests", dependencies: ["ITCBDongle", "BLEHost", "CLibUSB"]),
    ]
)
