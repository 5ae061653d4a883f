import CLinux
import BLEHost
import Chipsets

/// Chipset set-up before the host's bring-up: the firmware downloads of the
/// Chipsets target's `ChipsetTable` (sans-IO), run by the core's driver as
/// its first init step; this picks the plan for a transport and reads the files
/// each chipset asks for from `<firmware dir>/<its folder>/`. Names no vendor.
enum ChipsetSetup {
    /// Where the controller is, as the chipsets see it.
    static func context(for transport: Transport) -> ChipsetContext {
        var context = ChipsetContext()
        transport.chipsetFacts(into: &context)
        return context
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

    /// A file the caller owns, or no bytes.
    static func bytes(_ file: UnsafeMutableRawBufferPointer?) -> UnsafeRawBufferPointer {
        file.map { UnsafeRawBufferPointer($0) } ?? UnsafeRawBufferPointer(start: nil, count: 0)
    }

    /// The set-up the driver runs first on this transport: by VID:PID on USB,
    /// the probe (Reset, Read Local Version, then the chipset that recognises
    /// it) on other transports when --firmware-dir is given, on a UART for the
    /// chipsets that are always probed there, else none.
    static func setup(for transport: Transport, firmwareDirectoryGiven: Bool, resetFirst: Bool = false) -> VendorSetup {
        var context = context(for: transport)
        context.resetFirst = resetFirst
        let plan = VendorSetup.plan(for: &context, probe: firmwareDirectoryGiven)
        var quirks = QuirksOf()
        switch plan {
        case .fromReset(let index), .probe(only: let index?):
            transport.useVendorControl(ChipsetTable.ask(index, &quirks)?.vendorControlOverUSB ?? false)
        default:
            transport.useVendorControl(false)
        }
        return VendorSetup(plan: plan, context: context)
    }
}

/// What --controller-info prints about the chipset set-up of this run, if one ran.
enum ChipsetReport {
    nonisolated(unsafe) static var line: String? = nil
}

/// The active chipset in the platform's words (its log lines, its files).
struct ChipsetFacts {
    var label: String
    var info: ChipsetInfo
    var request: FileRequest
    var failure: String
    var summaryLevel: SummaryLevel
    var summary: String

    init(_ description: ChipsetDescription) {
        label = text(description.label)
        info = description.info
        request = description.request
        failure = "\(description.failure)"
        summaryLevel = description.summaryLevel
        summary = text(description.summary)
    }

    var directory: String { "\(info.directory)" }
    var package: String { "Debian package \(info.package)" }
}

func text(_ bytes: ChipsetText) -> String {
    bytes.withBytes { String(decoding: $0, as: UTF8.self) }
}

extension VendorSetup {
    /// The chipset running the set-up, in the platform's words; nil while probing or when none took the controller.
    mutating func facts() -> ChipsetFacts? { describe().map(ChipsetFacts.init) }
}

/// The files a chipset set-up asks for, read whole and kept until the session
/// ends (the loaders read them in place), and the set-up's log lines.
struct VendorFiles {
    var firmwareFile: UnsafeMutableRawBufferPointer? = nil
    var companionFile: UnsafeMutableRawBufferPointer? = nil
    /// The firmware file read (for the failure line).
    var firmwarePath = ""
    /// The "firmware loaded" line was written (or there was nothing to say).
    var reported = false

    var firmware: UnsafeRawBufferPointer { ChipsetSetup.bytes(firmwareFile) }
    var companion: UnsafeRawBufferPointer { ChipsetSetup.bytes(companionFile) }

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
    /// A chipset that runs from ROM without its file gets no bytes and a warning.
    mutating func read(for setup: inout VendorSetup, directory: String) -> Bool {
        release()
        firmwarePath = ""
        guard let facts = setup.facts() else { return false }
        let folder = "\(directory)/\(facts.directory)"
        let limit = facts.info.maximumFileSize
        let request = facts.request
        var tried = ["\(folder)/\(text(request.firmware))"]
        if !request.alternative.isEmpty { tried.append("\(folder)/\(text(request.alternative))") }
        for path in tried {
            if let file = ChipsetSetup.readFile(path, limit: limit) {
                firmwareFile = file
                firmwarePath = path
                break
            }
        }
        guard firmwareFile != nil else {
            let names = tried.joined(separator: " or ")
            if request.optional {
                Log.warning("\(facts.label): firmware file \(names) is missing; the controller runs from its ROM")
                return true
            }
            Log.error("\(facts.label): firmware file \(names) is missing; it is in the \(facts.package)")
            return false
        }
        let companionPath = "\(folder)/\(text(request.companion))"
        if !request.companion.isEmpty { companionFile = ChipsetSetup.readFile(companionPath, limit: limit) }
        if companionFile == nil, request.companionRequired {
            Log.error("\(facts.label): config file \(companionPath) is missing; it is in the \(facts.package)")
            return false
        }
        Log.info("\(facts.label): loading \(firmwarePath)\(companionFile == nil ? "" : " and \(companionPath)")")
        return true
    }

    /// The set-up handed over to the host: what it loaded, and an address the
    /// controller's whole model shares is not used as the public one.
    mutating func setupEnded(_ setup: inout VendorSetup, _ configuration: inout HostConfiguration) {
        reportLoaded(&setup)
        guard let shared = setup.status.sharedDefaultAddress, let facts = setup.facts() else { return }
        let why = "\(facts.label): its address \(shared.string) is a default every unit of the model shares"
        if configuration.forceRandomAddress {
            Log.info("\(why); --address is used")
            return
        }
        configuration.forceRandomAddress = true
        Log.info("\(why); using the static random address \(configuration.staticAddress.string) (derived from the machine id) instead")
    }

    /// Once the host takes over: what was loaded, if anything. The files are no longer needed.
    mutating func reportLoaded(_ setup: inout VendorSetup) {
        reported = true
        defer { release() }
        guard let facts = setup.facts() else { return }
        ChipsetReport.line = "\(facts.label), \(firmwarePath.isEmpty ? "no file read" : firmwarePath) (\(facts.package))"
        switch facts.summaryLevel {
        case .info: Log.info("\(facts.label): \(facts.summary)")
        case .debug: Log.debug("\(facts.label): \(facts.summary)")
        case .none: break
        }
    }

    /// The set-up failed: why, and which file.
    func logFailure(_ setup: inout VendorSetup) {
        guard let facts = setup.facts() else {
            Log.error("controller refused Read Local Version Information during the chipset probe")
            return
        }
        let file = firmwarePath.isEmpty ? "" : " (\(firmwarePath))"
        Log.error("\(facts.label): \(facts.info.failureVerb): \(facts.failure)\(file)")
    }

    /// The controller went silent during the set-up: which one.
    static func silentPhase(_ setup: inout VendorSetup) -> String {
        guard let facts = setup.facts() else { return "the chipset probe (Reset, Read Local Version)" }
        return "the \(facts.info.vendor) \(facts.info.setupName)"
    }
}
