import Glibc
import BLEHost

/// Vendor set-up before the host's bring-up: Realtek and Intel firmware
/// download. The protocols are the core's `RealtekLoader` and `IntelLoader`
/// (sans-IO); this drives them over the transport and reads the files from
/// `<firmware dir>/rtl_bt/` and `<firmware dir>/intel/`.
enum FirmwareSetup {
    static let realtekPackage = "Debian package firmware-realtek (component non-free-firmware)"

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

    /// Vendor set-up for this transport; nil when the host may bring the
    /// controller up, else the exit code. USB: by VID:PID (Realtek or Intel).
    /// Other transports with --firmware-dir: the Realtek probe (Reset, Read
    /// Local Version) and, for manufacturer 2, the Intel loader after it.
    static func run(transport: Transport, snoop: BTSnoopWriter?, firmwareDirectory: String) -> Int32? {
        if let usb = transport as? USBTransport, IntelUSB.isKnown(vendor: usb.candidate.vendor, product: usb.candidate.product) {
            return runIntel(transport: transport, snoop: snoop, firmwareDirectory: firmwareDirectory, afterProbe: false)
        }
        var manufacturer: UInt16 = 0
        if let code = runRealtek(transport: transport, snoop: snoop, firmwareDirectory: firmwareDirectory,
                                 manufacturer: &manufacturer) {
            return code
        }
        guard manufacturer == 2, !(transport is USBTransport) else { return nil }
        return runIntel(transport: transport, snoop: snoop, firmwareDirectory: firmwareDirectory, afterProbe: true)
    }

    /// Runs the Realtek loader; nil when the host may bring the controller up,
    /// else the exit code.
    static func runRealtek(transport: Transport, snoop: BTSnoopWriter?, firmwareDirectory: String,
                           manufacturer: inout UInt16) -> Int32? {
        var loader = RealtekLoader()
        var packet = HCIPacket()
        let io = LoaderIO(transport: transport, snoop: snoop, timeout: 10_000, what: "the Realtek firmware check")
        var firmware: UnsafeMutableRawBufferPointer? = nil
        var config: UnsafeMutableRawBufferPointer? = nil
        defer {
            firmware?.deallocate()
            config?.deallocate()
        }
        var step = loader.start(into: &packet)
        while true {
            switch step {
            case .send:
                if let code = io.send(packet) { return code }
                step = .wait
            case .needFiles(let chip):
                let directory = "\(firmwareDirectory)/rtl_bt"
                let firmwarePath = "\(directory)/\(chip.firmwareFile)"
                let configPath = "\(directory)/\(chip.configFile)"
                guard let files = readFiles("Realtek \(chip.name)", firmwarePath, companion: configPath,
                                            limit: RealtekPatchFile.maximumFileSize, package: realtekPackage) else {
                    return Exit.controller
                }
                (firmware, config) = files
                if config == nil, chip.configRequired {
                    Log.error("Realtek \(chip.name): config file \(configPath) is missing; it is in the \(realtekPackage)")
                    return Exit.controller
                }
                Log.info("Realtek \(chip.name): loading \(firmwarePath)\(config == nil ? "" : " and \(configPath)")")
                step = loader.provide(firmware: UnsafeRawBufferPointer(files.firmware), config: bytes(config), into: &packet)
            case .done(let chip):
                manufacturer = loader.manufacturer
                if let chip {
                    Log.info("Realtek \(chip.name): firmware loaded (version 0x\(hex32(loader.payload.firmwareVersion)), \(loader.fragmentCount) fragments, ROM version \(loader.romVersion))")
                }
                return nil
            case .failed(let error):
                let name = loader.chip.map { "\($0.name)" } ?? "controller"
                let file = loader.chip.map { " (\(firmwareDirectory)/rtl_bt/\($0.firmwareFile))" } ?? ""
                Log.error("Realtek \(name): firmware download failed: \(error.text)\(file)")
                return Exit.controller
            case .wait:
                switch io.nextEvent() {
                case .failed(let code): return code
                case .event(let event): step = event.withBytes { loader.handle(event: $0, into: &packet) }
                }
            }
        }
    }

    static let intelPackage = "Debian package firmware-iwlwifi (component non-free-firmware)"

    /// Runs the Intel loader. On USB the boot loader takes Secure Send on the
    /// bulk OUT endpoint and answers on bulk IN (Linux btusb does the same).
    static func runIntel(transport: Transport, snoop: BTSnoopWriter?, firmwareDirectory: String,
                         afterProbe: Bool) -> Int32? {
        var loader = IntelLoader()
        var packet = HCIPacket()
        // Each answer restarts the clock: a download is thousands of commands.
        let io = LoaderIO(transport: transport, snoop: snoop, timeout: 5_000, what: "the Intel firmware load")
        let usb = transport as? USBTransport
        usb?.bulkInCarriesEvents(true)
        defer { usb?.bulkInCarriesEvents(false) }
        var firmware: UnsafeMutableRawBufferPointer? = nil
        var ddc: UnsafeMutableRawBufferPointer? = nil
        defer {
            firmware?.deallocate()
            ddc?.deallocate()
        }
        var base = ""
        var step = afterProbe ? loader.startAtReadVersion(into: &packet) : loader.start(into: &packet)
        while true {
            switch step {
            case .send:
                let bulk = usb != nil && loader.phase == .secureSend
                if let code = io.send(packet, onBulk: bulk) { return code }
                step = .wait
            case .needFiles:
                var name = FixedBytes<32>()
                loader.version.writeBaseName(into: &name)
                base = name.withBytes { String(decoding: $0, as: UTF8.self) }
                let firmwarePath = "\(firmwareDirectory)/intel/\(base).sfi"
                let ddcPath = "\(firmwareDirectory)/intel/\(base).ddc"
                guard let files = readFiles("Intel \(loader.version.name)", firmwarePath, companion: ddcPath,
                                            limit: IntelFirmwareLayout.maximumFileSize, package: intelPackage) else {
                    return Exit.controller
                }
                (firmware, ddc) = files
                Log.info("Intel \(loader.version.name): loading \(firmwarePath)\(ddc == nil ? "" : " and \(ddcPath)")")
                step = loader.provide(firmware: UnsafeRawBufferPointer(files.firmware), ddc: bytes(ddc), into: &packet)
            case .done(let loaded):
                if loaded {
                    Log.info("Intel \(loader.version.name): firmware loaded (\(base).sfi, \(loader.commandsSent) vendor commands, boot address 0x\(hex32(loader.bootAddress)), \(loader.ddcRecords) DDC records)")
                } else {
                    Log.debug("Intel \(loader.version.name): operational firmware already running")
                }
                return nil
            case .failed(let error):
                let file = base.isEmpty ? "" : " (\(firmwareDirectory)/intel/\(base).sfi)"
                Log.error("Intel \(loader.version.name): firmware load failed: \(error.text)\(file)")
                return Exit.controller
            case .wait:
                switch io.nextEvent() {
                case .failed(let code): return code
                case .event(let event): step = event.withBytes { loader.handle(event: $0, into: &packet) }
                }
            }
        }
    }
}

/// The I/O both loaders share: write the loader's command, wait for the next
/// HCI event (setup phase only: copies and small allocations are fine here).
final class LoaderIO {
    enum Next { case event(FixedBytes<260>), failed(Int32) }

    let transport: Transport
    let snoop: BTSnoopWriter?
    let timeout: UInt64
    let what: String
    var deframer = H4Deframer()
    var fds: [pollfd]
    var deadline: UInt64
    let input = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 8)
    var pending: [FixedBytes<260>] = []
    var answered = false

    deinit { input.deallocate() }

    init(transport: Transport, snoop: BTSnoopWriter?, timeout: UInt64, what: String) {
        self.transport = transport
        self.snoop = snoop
        self.timeout = timeout
        self.what = what
        fds = transport.pollDescriptors
        // HCI Reset comes back in milliseconds; 3 s of silence is a hung dongle.
        deadline = monotonicMilliseconds() + min(timeout, 3_000)
    }

    /// Writes one command (on USB bulk OUT when `onBulk`: an Intel boot loader's Secure Send).
    func send(_ packet: HCIPacket, onBulk: Bool = false) -> Int32? {
        packet.withBytes { raw in
            snoop?.record(raw, received: false)
            Log.trace("> \(hexDump(raw))")
        }
        var out = packet
        if onBulk { out[0] = H4PacketType.acl }  // the USB transport's bulk OUT path
        var failure: TransportError? = nil
        out.withBytes { raw in
            do throws(TransportError) { try transport.write(raw) } catch { failure = error }
        }
        do throws(TransportError) {
            if let failure { throw failure }
            try transport.flush()
        } catch {
            Log.error(error.description)
            return Exit.transport
        }
        return nil
    }

    /// The next event; timeouts count from the last one.
    func nextEvent() -> Next {
        while pending.isEmpty {
            let now = monotonicMilliseconds()
            guard now < deadline else {
                if !answered && transport.offersPortReset {
                    // Not even HCI Reset was answered: a dongle that hangs after a warm start.
                    transport.warnHungAfterWarmStart()
                    return .failed(Exit.retryWithPortReset)
                }
                Log.error("controller at \(transport.description) did not answer during \(what)")
                return .failed(Exit.controller)
            }
            var wait = Int32(min(deadline - now, 1_000))
            if let hint = transport.timeoutHint { wait = min(wait, hint) }
            let ready = poll(&fds, nfds_t(fds.count), wait)
            if ready < 0 && errno != EINTR { return .failed(Exit.transport) }
            let count: Int
            do throws(TransportError) {
                count = try fds.withUnsafeMutableBufferPointer { ready throws(TransportError) in
                    try transport.read(into: input, ready: ready)
                }
            } catch {
                Log.error(error.description)
                return .failed(Exit.transport)
            }
            for i in fds.indices { fds[i].revents = 0 }
            guard count > 0 else { continue }
            let bytes = UnsafeRawBufferPointer(rebasing: input[0..<count])
            var offset = 0
            while true {
                let frame = deframer.next(bytes, offset: &offset)
                var copy = FixedBytes<260>()
                var type: UInt8 = 0
                switch frame {
                case .none: break
                case .inPlace(let t, let start, let length):
                    type = t
                    _ = copy.append(UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)]))
                case .buffered(let t):
                    type = t
                    _ = deframer.withPacket { copy.append($0) }
                }
                if frame == .none { break }
                copy.withBytes { raw in
                    snoop?.record(type, raw, received: true)
                    Log.trace("< \(hex(type)) \(hexDump(raw))")
                }
                if type == H4PacketType.event { pending.append(copy) }
            }
        }
        deadline = monotonicMilliseconds() + timeout
        answered = true
        return .event(pending.removeFirst())
    }
}

func hex32(_ value: UInt32) -> String {
    let digits = Array("0123456789abcdef")
    var text = ""
    for shift in stride(from: 28, through: 0, by: -4) { text.append(digits[Int(value >> UInt32(shift) & 0xF)]) }
    return text
}
