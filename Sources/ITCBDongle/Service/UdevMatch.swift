import CLinux

/// `itcb-dongle --udev-match DEVPATH` (udev's %p, or a sysfs directory): the IMPORT{program} helper of
/// udev/70-itcb-dongle.rules. It decides, for one USB device, whether it is a
/// Bluetooth controller (class E0/01/01 on the device or on interface 0, read
/// from the cached descriptors in sysfs, which exist already at "add" time when
/// the interface directories may not) and whether the administrator listed it in
/// the dongles file. It prints udev environment assignments and always exits 0.
/// The path and the files are bytes in fixed buffers (ControllerBytes.swift):
/// no String, Substring or array of lines made but each entry's text.
enum UdevMatch {
    static let defaultConfig: StaticString = "/etc/itcb-dongle/dongles"
    /// The most of a file read (the descriptors: a configuration is at most 64 KB).
    static let fileLimit = 65_536

    @inline(never)
    static func run(bytes devpath: UnsafeRawBufferPointer) -> Int32 {
        // udev gives %p (/devices/…); tests give a whole path to a fake sysfs tree.
        var path = CPathBuffer()
        let prefix: StaticString = "/devices/"
        if devpath.count >= prefix.utf8CodeUnitCount,
           memcmp(devpath.baseAddress!, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0 { path.append("/sys") }
        path.append(devpath)
        path.append("/descriptors")
        guard let descriptors = readFileBytes(path.pointer, limit: fileLimit) else {
            return say("ITCB_BLUETOOTH=0")
        }
        defer { descriptors.deallocate() }
        let d = UnsafeRawBufferPointer(descriptors)
        guard isBluetooth(d) else { return say("ITCB_BLUETOOTH=0") }
        _ = say("ITCB_BLUETOOTH=1")
        // The kernel name: the last non-empty component.
        var end = devpath.count
        while end > 0, devpath[end - 1] == 0x2F { end -= 1 }
        var start = end
        while start > 0, devpath[start - 1] != 0x2F { start -= 1 }
        let kernelName = UnsafeRawBufferPointer(rebasing: devpath[start..<end])
        let config = environment("ITCB_DONGLES_FILE").map { UnsafePointer($0) }
            ?? UnsafeRawPointer(defaultConfig.utf8Start).assumingMemoryBound(to: CChar.self)
        if configured(config: config, vendor: UInt16(d[8]) | UInt16(d[9]) << 8, product: UInt16(d[10]) | UInt16(d[11]) << 8,
                      path: kernelName) {
            _ = say("ITCB_CONFIGURED=1")
            path.cut(to: 0)
            path.append("ITCB_INSTANCE=")
            path.append(kernelName)
            writeLine(1, nil, path.bytes)
        } else {
            _ = say("ITCB_CONFIGURED=0")
        }
        return 0
    }

    /// One line to standard output; 0, the exit status.
    @inline(never)
    static func say(_ line: StaticString) -> Int32 {
        writeLine(1, nil, UnsafeRawBufferPointer(start: line.utf8Start, count: line.utf8CodeUnitCount))
        return 0
    }

    static func isBluetooth(_ d: [UInt8]) -> Bool { d.withUnsafeBytes { isBluetooth($0) } }

    /// Device descriptor class E0/01/01, or the first interface descriptor
    /// (interface 0, alternate 0) of the first configuration is E0/01/01 (or
    /// FF/01/01 on a dongle a chipset claims: see `isBluetoothClass`).
    static func isBluetooth(_ d: UnsafeRawBufferPointer) -> Bool {
        guard d.count >= 18, d[1] == 1 else { return false }
        let vendor = UInt16(d[8]) | UInt16(d[9]) << 8, product = UInt16(d[10]) | UInt16(d[11]) << 8
        if isBluetoothClass(d[4], d[5], d[6], vendor: vendor, product: product) { return true }
        var offset = Int(d[0])
        while offset + 1 < d.count {
            let length = Int(d[offset]), type = d[offset + 1]
            guard length >= 2, offset + length <= d.count else { return false }
            if type == 4, length >= 9, d[offset + 2] == 0, d[offset + 3] == 0 {
                return isBluetoothClass(d[offset + 5], d[offset + 6], d[offset + 7], vendor: vendor, product: product)
            }
            offset += length
        }
        return false
    }

    /// Lines of the dongles file: `VID:PID`, a bus-port path (`1-1.2`), or the
    /// same with the `usb:` prefix of --transport; `#` starts a comment.
    static func configured(config: UnsafePointer<CChar>, vendor: UInt16, product: UInt16, path: UnsafeRawBufferPointer) -> Bool {
        guard let file = readFileBytes(config, limit: fileLimit) else { return false }
        defer { file.deallocate() }
        let text = UnsafeRawBufferPointer(file)
        // The device's own bus-port path, read as an entry's is (a kernel name is
        // canonical: "1-1.2" matches the entries 1-1.2 and 01-1.02, as it did when
        // the entry was written back out and compared).
        // Bus 0 when the name is not a path: no entry's bus is 0.
        var device = (bus: 0, ports: USBPorts())
        if case .success(.usbPath(let bus, let ports)) = usbSpec(path) { device = (bus, ports) }
        // Line by line over the bytes; each entry (before any `#`) made text
        // to be trimmed and parsed as --transport's value is.
        var number = 0, start = 0
        while start <= text.count {
            var stop = start
            while stop < text.count, text[stop] != 0x0A { stop += 1 }
            var cut = start
            while cut < stop, text[cut] != 0x23 { cut += 1 }
            number += 1
            // Made by ArgText's one outlined decoding (the same repair), not inlined here.
            let bytes = text.baseAddress.map { $0.assumingMemoryBound(to: UInt8.self) + start }
            let entry = ArgText(start: bytes, count: cut - start).string.trimmingCharacters()
            start = stop + 1
            if entry.isEmpty { continue }
            switch entrySpec(entry) {
            case .success(.usbID(let v, let p)) where v == vendor && p == product: return true
            case .success(.usbPath(let bus, let ports)) where device.bus == bus && device.ports == ports:
                return true
            case .success: continue
            case .failure: warn(config, number, entry)
            }
        }
        return false
    }

    /// `text` after "usb:", parsed as --transport's value is (no String concatenated).
    @inline(never)
    static func usbSpec(_ text: UnsafeRawBufferPointer) -> Result<TransportSpec, TransportSpecError> {
        var value: BuiltText = "usb:"
        value.bytes.append(contentsOf: text)
        return value.bytes.withUnsafeBufferPointer { TransportSpec.parse($0) }
    }

    /// An entry parsed as --transport's value is, "usb:" put before it unless
    /// it has its own (one text built, no String's bytes borrowed here).
    @inline(never)
    static func entrySpec(_ entry: String) -> Result<TransportSpec, TransportSpecError> {
        let skip = entry.hasBytePrefix("usb:") ? 4 : 0
        let value: BuiltText = "usb:\(entry)"
        return value.bytes.withUnsafeBufferPointer { TransportSpec.parse(UnsafeBufferPointer(rebasing: $0[skip...])) }
    }

    /// udev logs it (journalctl -u systemd-udevd): a typo must not go unseen.
    @inline(never)
    static func warn(_ config: UnsafePointer<CChar>, _ number: Int, _ entry: String) {
        Log.warning("""
            \(String(repairingCString: config)) line \(number): '\(escaped: entry)' is not a dongle \
            (VID:PID such as 0a12:0001, or a bus-port path such as 1-1.2); ignored
            """)
    }
}
