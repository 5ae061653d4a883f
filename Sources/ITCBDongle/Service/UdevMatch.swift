import CLinux

/// `itcb-dongle --udev-match DEVPATH` (udev's %p, or a sysfs directory): the IMPORT{program} helper of
/// udev/70-itcb-dongle.rules. It decides, for one USB device, whether it is a
/// Bluetooth controller (class E0/01/01 on the device or on interface 0, read
/// from the cached descriptors in sysfs, which exist already at "add" time when
/// the interface directories may not) and whether the administrator listed it in
/// the dongles file. It prints udev environment assignments and always exits 0.
enum UdevMatch {
    static let defaultConfig = "/etc/itcb-dongle/dongles"

    static func run(devpath: String) -> Int32 {
        // udev gives %p (/devices/…); tests give a whole path to a fake sysfs tree.
        let sysfs = devpath.hasBytePrefix("/devices/") ? "/sys" + devpath : devpath
        let kernelName = sysfs.split(ascii: "/").last.map(String.init) ?? ""
        guard let descriptors = readBinary(sysfs + "/descriptors"), isBluetooth(descriptors) else {
            printLine("ITCB_BLUETOOTH=0")
            return 0
        }
        printLine("ITCB_BLUETOOTH=1")
        let vendor = UInt16(descriptors[8]) | UInt16(descriptors[9]) << 8
        let product = UInt16(descriptors[10]) | UInt16(descriptors[11]) << 8
        let config = getenv("ITCB_DONGLES_FILE").map { String(cString: $0) } ?? defaultConfig
        if configured(config: config, vendor: vendor, product: product, path: kernelName) {
            printLine("ITCB_CONFIGURED=1")
            printLine("ITCB_INSTANCE=\(kernelName)")
        } else {
            printLine("ITCB_CONFIGURED=0")
        }
        return 0
    }

    /// Device descriptor class E0/01/01, or the first interface descriptor
    /// (interface 0, alternate 0) of the first configuration is E0/01/01 (or
    /// FF/01/01 on a dongle a chipset claims: see `isBluetoothClass`).
    static func isBluetooth(_ d: [UInt8]) -> Bool {
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
    static func configured(config: String, vendor: UInt16, product: UInt16, path: String) -> Bool {
        guard let text = readText(config) else { return false }
        // The device's own bus-port path, read as an entry's is (a kernel name is
        // canonical: "1-1.2" matches the entries 1-1.2 and 01-1.02, as it did when
        // the entry was written back out and compared).
        var device: (bus: Int, ports: [Int])? = nil
        if case .success(.usbPath(let bus, let ports)) = TransportSpec.parse("usb:" + path) { device = (bus, ports) }
        for (number, rawLine) in text.split(ascii: "\n", omittingEmptySubsequences: false).enumerated() {
            let entry = String(rawLine.prefix(beforeASCII: "#")).trimmingCharacters()
            if entry.isEmpty { continue }
            switch TransportSpec.parse(entry.hasBytePrefix("usb:") ? entry : "usb:" + entry) {
            case .success(.usbID(let v, let p)) where v == vendor && p == product: return true
            case .success(.usbPath(let bus, let ports)) where device.map({ $0.bus == bus && $0.ports == ports }) ?? false:
                return true
            case .success: continue
            case .failure:
                // udev logs it (journalctl -u systemd-udevd): a typo must not go unseen.
                Log.warning("""
                    \(config) line \(number + 1): '\(entry.escaped)' is not a dongle (VID:PID such as 0a12:0001, \
                    or a bus-port path such as 1-1.2); ignored
                    """)
            }
        }
        return false
    }

    static func readBinary(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            result += chunk[0..<n]
        }
        return result
    }

    static func readText(_ path: String) -> String? {
        readBinary(path).map { String(decoding: $0, as: UTF8.self) }
    }
}
