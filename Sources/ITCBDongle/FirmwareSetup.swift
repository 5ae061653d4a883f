import Glibc
import BLEHost

/// Vendor set-up before the host's bring-up: Realtek firmware download. The
/// protocol is the core's `RealtekLoader` (sans-IO); this drives it over the
/// transport and reads the files from `<firmware dir>/rtl_bt/`.
enum FirmwareSetup {
    static let realtekPackage = "Debian package firmware-realtek (component non-free-firmware)"

    /// Whether to probe for a Realtek ROM: always for a USB dongle with a
    /// Realtek VID:PID; on other transports only when --firmware-dir is given.
    static func wanted(_ transport: Transport, firmwareDirectoryGiven: Bool) -> Bool {
        if let usb = transport as? USBTransport {
            return RealtekChip.isKnownUSB(vendor: usb.candidate.vendor, product: usb.candidate.product)
        }
        return firmwareDirectoryGiven
    }

    /// Whole file, or nil when it cannot be read. The caller deallocates.
    static func readFile(_ path: String) -> UnsafeMutableRawBufferPointer? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        guard fseek(file, 0, SEEK_END) == 0 else { return nil }
        let size = ftell(file)
        guard size >= 0, size <= RealtekPatchFile.maximumFileSize, fseek(file, 0, SEEK_SET) == 0 else { return nil }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(size, 1), alignment: 8)
        guard size == 0 || fread(buffer.baseAddress, 1, size, file) == size else {
            buffer.deallocate()
            return nil
        }
        return UnsafeMutableRawBufferPointer(rebasing: buffer[0..<size])
    }

    static func fileExists(_ path: String) -> Bool { access(path, R_OK) == 0 }

    /// Runs the Realtek loader; nil when the host may bring the controller up,
    /// else the exit code.
    static func runRealtek(transport: Transport, snoop: BTSnoopWriter?, firmwareDirectory: String,
                           timeout: UInt64 = 10_000) -> Int32? {
        var loader = RealtekLoader()
        var packet = HCIPacket()
        var deframer = H4Deframer()
        var firmware: UnsafeMutableRawBufferPointer? = nil
        var config: UnsafeMutableRawBufferPointer? = nil
        defer {
            firmware?.deallocate()
            config?.deallocate()
        }
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 8)
        defer { input.deallocate() }
        var fds = transport.pollDescriptors
        let deadline = monotonicMilliseconds() + timeout
        var step = loader.start(into: &packet)
        while true {
            switch step {
            case .send:
                do throws(TransportError) {
                    var failure: TransportError? = nil
                    packet.withBytes { raw in
                        snoop?.record(raw, received: false)
                        Log.trace("> \(hexDump(raw))")
                        do throws(TransportError) { try transport.write(raw) } catch { failure = error }
                    }
                    if let failure { throw failure }
                    try transport.flush()
                } catch {
                    Log.error(error.description)
                    return Exit.transport
                }
                step = .wait
            case .needFiles(let chip):
                let directory = "\(firmwareDirectory)/rtl_bt"
                let firmwarePath = "\(directory)/\(chip.firmwareFile)"
                let configPath = "\(directory)/\(chip.configFile)"
                guard let fw = readFile(firmwarePath) else {
                    Log.error("Realtek \(chip.name): firmware file \(firmwarePath) is missing; it is in the \(realtekPackage)")
                    return Exit.controller
                }
                firmware = fw
                config = readFile(configPath)
                if config == nil, chip.configRequired {
                    Log.error("Realtek \(chip.name): config file \(configPath) is missing; it is in the \(realtekPackage)")
                    return Exit.controller
                }
                Log.info("Realtek \(chip.name): loading \(firmwarePath)\(config == nil ? "" : " and \(configPath)")")
                let empty = UnsafeRawBufferPointer(start: nil, count: 0)
                step = loader.provide(firmware: UnsafeRawBufferPointer(fw),
                                      config: config.map { UnsafeRawBufferPointer($0) } ?? empty, into: &packet)
            case .done(let chip):
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
                let now = monotonicMilliseconds()
                guard now < deadline else {
                    Log.error("controller at \(transport.description) did not answer during the Realtek firmware check")
                    return Exit.controller
                }
                var wait = Int32(min(deadline - now, 1_000))
                if let hint = transport.timeoutHint { wait = min(wait, hint) }
                let ready = poll(&fds, nfds_t(fds.count), wait)
                if ready < 0 && errno != EINTR { return Exit.transport }
                let count: Int
                do throws(TransportError) {
                    count = try fds.withUnsafeMutableBufferPointer { ready throws(TransportError) in
                        try transport.read(into: input, ready: ready)
                    }
                } catch {
                    Log.error(error.description)
                    return Exit.transport
                }
                for i in fds.indices { fds[i].revents = 0 }
                guard count > 0 else { continue }
                let bytes = UnsafeRawBufferPointer(rebasing: input[0..<count])
                var offset = 0
                while case .wait = step {
                    let frame = deframer.next(bytes, offset: &offset)
                    var copy = FixedBytes<1028>()
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
                        if type == H4PacketType.event { step = loader.handle(event: raw, into: &packet) }
                    }
                }
            }
        }
    }
}

func hex32(_ value: UInt32) -> String {
    let digits = Array("0123456789abcdef")
    var text = ""
    for shift in stride(from: 28, through: 0, by: -4) { text.append(digits[Int(value >> UInt32(shift) & 0xF)]) }
    return text
}
