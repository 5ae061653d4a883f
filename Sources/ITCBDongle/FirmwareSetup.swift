import CLinux
import BLEHost
import VendorDrivers

/// Vendor set-up before the host's bring-up: Realtek and Intel firmware
/// download. The protocols are `RealtekLoader` and `IntelLoader` of the
/// VendorDrivers target (sans-IO), run by the core's driver as its first init
/// step; this picks the plan for a transport and reads the files from
/// `<firmware dir>/rtl_bt/` and `<firmware dir>/intel/`.
enum FirmwareSetup {
    static let realtekPackage = "Debian package firmware-realtek (component non-free-firmware)"
    static let intelPackage = "Debian package firmware-iwlwifi (component non-free-firmware)"

    /// Whether to probe for a vendor ROM: always for a USB dongle with a
    /// Realtek or Intel VID:PID; on other transports only when --firmware-dir is given.
    static func wanted(_ transport: Transport, firmwareDirectoryGiven: Bool) -> Bool {
        if let usb = transport as? USBTransport {
            return RealtekChip.isKnownUSB(vendor: usb.candidate.vendor, product: usb.candidate.product)
                || IntelUSB.isKnown(vendor: usb.candidate.vendor, product: usb.candidate.product)
        }
        return firmwareDirectoryGiven
    }

    /// Whole file, or nil when it cannot be read. The caller deallocates.
    static func readFile(_ path: String, limit: Int) -> UnsafeMutableRawBufferPointer? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        guard fseek(file, 0, SEEK_END) == 0 else { return nil }
        let size = ftell(file)
        guard size >= 0, size <= limit, fseek(file, 0, SEEK_SET) == 0 else { return nil }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(size, 1), alignment: 8)
        guard size == 0 || fread(buffer.baseAddress, 1, size, file) == size else {
            buffer.deallocate()
            return nil
        }
        return UnsafeMutableRawBufferPointer(rebasing: buffer[0..<size])
    }

    static func fileExists(_ path: String) -> Bool { access(path, R_OK) == 0 }

    /// A vendor's firmware file and its optional companion (Realtek config,
    /// Intel DDC); a missing firmware file is one error line naming it and the package.
    static func readFiles(_ chip: String, _ path: String, companion: String, limit: Int, package: String)
        -> (firmware: UnsafeMutableRawBufferPointer, companion: UnsafeMutableRawBufferPointer?)? {
        guard let firmware = readFile(path, limit: limit) else {
            Log.error("\(chip): firmware file \(path) is missing; it is in the \(package)")
            return nil
        }
        return (firmware, readFile(companion, limit: limit))
    }

    /// A file the caller owns, or no bytes.
    static func bytes(_ file: UnsafeMutableRawBufferPointer?) -> UnsafeRawBufferPointer {
        file.map { UnsafeRawBufferPointer($0) } ?? UnsafeRawBufferPointer(start: nil, count: 0)
    }

    /// The set-up the driver runs first on this transport: by VID:PID on USB
    /// (Realtek or Intel), the Realtek probe (then Intel, for manufacturer 2)
    /// on other transports when --firmware-dir is given, else none.
    static func setup(for transport: Transport, firmwareDirectoryGiven: Bool) -> VendorSetup {
        let usb = transport as? USBTransport
        guard wanted(transport, firmwareDirectoryGiven: firmwareDirectoryGiven) else {
            return VendorSetup(plan: .none, overUSB: usb != nil)
        }
        if let usb, IntelUSB.isKnown(vendor: usb.candidate.vendor, product: usb.candidate.product) {
            return VendorSetup(plan: .intel, overUSB: true)
        }
        return VendorSetup(plan: .probe, overUSB: usb != nil)
    }
}

/// The files a vendor set-up asks for, read whole and kept until the session
/// ends (the loaders read them in place), and the set-up's log lines.
struct VendorFiles {
    var firmwareFile: UnsafeMutableRawBufferPointer? = nil
    var companionFile: UnsafeMutableRawBufferPointer? = nil
    /// Base name of the Intel files (`ibt-…`).
    var intelBase = ""
    /// The "firmware loaded" line was written (or there was nothing to say).
    var reported = false

    var firmware: UnsafeRawBufferPointer { FirmwareSetup.bytes(firmwareFile) }
    var companion: UnsafeRawBufferPointer { FirmwareSetup.bytes(companionFile) }

    mutating func release() {
        free()
        firmwareFile = nil
        companionFile = nil
    }

    func free() {
        firmwareFile?.deallocate()
        companionFile?.deallocate()
    }

    /// Reads what the set-up asks for; false (with the error line) when a required file is missing.
    mutating func read(for setup: inout VendorSetup, directory: String) -> Bool {
        release()
        switch setup.vendor {
        case .realtek:
            guard let chip = setup.realtek.chip else { return false }
            return load("Realtek \(chip.name)", "\(directory)/rtl_bt/\(chip.firmwareFile)", companion: "\(directory)/rtl_bt/\(chip.configFile)",
                        companionRequired: chip.configRequired, limit: RealtekPatchFile.maximumFileSize, package: FirmwareSetup.realtekPackage)
        case .intel:
            var name = FixedBytes<32>()
            setup.intel.version.writeBaseName(into: &name)
            intelBase = name.withBytes { String(decoding: $0, as: UTF8.self) }
            return load("Intel \(setup.intel.version.name)", "\(directory)/intel/\(intelBase).sfi", companion: "\(directory)/intel/\(intelBase).ddc",
                        companionRequired: false, limit: IntelFirmwareLayout.maximumFileSize, package: FirmwareSetup.intelPackage)
        case .none:
            return false
        }
    }

    /// One vendor's file pair, read whole; says what it loads, or which file is missing.
    mutating func load(_ chip: String, _ firmwarePath: String, companion companionPath: String, companionRequired: Bool,
                       limit: Int, package: String) -> Bool {
        guard let files = FirmwareSetup.readFiles(chip, firmwarePath, companion: companionPath, limit: limit, package: package) else {
            return false
        }
        (firmwareFile, companionFile) = files
        if companionFile == nil, companionRequired {
            Log.error("\(chip): config file \(companionPath) is missing; it is in the \(package)")
            return false
        }
        Log.info("\(chip): loading \(firmwarePath)\(companionFile == nil ? "" : " and \(companionPath)")")
        return true
    }

    /// Once the host takes over: what was loaded, if anything. The files are no longer needed.
    mutating func reportLoaded(_ setup: VendorSetup, directory: String) {
        reported = true
        defer { release() }
        if let chip = setup.realtek.chip, setup.realtek.phase == .done {
            let loader = setup.realtek
            Log.info("Realtek \(chip.name): firmware loaded (version 0x\(hex32(loader.payload.firmwareVersion)), \(loader.fragmentCount) fragments, ROM version \(loader.romVersion))")
        }
        guard setup.vendor == .intel else { return }
        let loader = setup.intel
        if setup.intelLoaded {
            Log.info("Intel \(loader.version.name): firmware loaded (\(intelBase).sfi, \(loader.commandsSent) vendor commands, boot address 0x\(hex32(loader.bootAddress)), \(loader.ddcRecords) DDC records)")
        } else {
            Log.debug("Intel \(loader.version.name): operational firmware already running")
        }
    }

    /// The set-up failed: why, and which file.
    func logFailure(_ setup: VendorSetup, directory: String) {
        switch setup.vendor {
        case .intel:
            let loader = setup.intel
            let file = intelBase.isEmpty ? "" : " (\(directory)/intel/\(intelBase).sfi)"
            Log.error("Intel \(loader.version.name): firmware load failed: \(setup.intelError?.text ?? "unexpected answer")\(file)")
        default:
            let loader = setup.realtek
            let name = loader.chip.map { "\($0.name)" } ?? "controller"
            let file = loader.chip.map { " (\(directory)/rtl_bt/\($0.firmwareFile))" } ?? ""
            Log.error("Realtek \(name): firmware download failed: \(setup.realtekError?.text ?? "unexpected answer")\(file)")
        }
    }
}

func hex32(_ value: UInt32) -> String {
    let digits = Array("0123456789abcdef")
    var text = ""
    for shift in stride(from: 28, through: 0, by: -4) { text.append(digits[Int(value >> UInt32(shift) & 0xF)]) }
    return text
}
