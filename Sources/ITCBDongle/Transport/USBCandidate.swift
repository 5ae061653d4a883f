import BLEHost
import CLibUSB
import CLinux
import Chipsets

/// A USB device that looks like a Bluetooth controller (Core Vol 4 Part B §2:
/// class E0 Wireless, subclass 01 RF, protocol 01 Bluetooth, or FF/01/01 on a
/// dongle a chipset claims) on the device or on interface 0. Combo cards that
/// carry Bluetooth on another interface do not match.
struct USBCandidate {
    let device: OpaquePointer
    let vendor: UInt16
    let product: UInt16
    let bus: Int
    /// The ports from the root hub, a byte each (the first lowest; libusb gives
    /// at most 7), and how many: no array to copy and release with the candidate.
    let ports: UInt64
    let depth: Int
    let isBluetooth: Bool
    /// A Bluetooth device by its vendor-specific FF/01/01 class (see `USBClaim.vendorClass`).
    var vendorClass = false

    /// The sysfs name, e.g. "1-1.2" (bus 1, port 1, then port 2 of that hub).
    var path: String { usbPath(bus: bus, packed: ports, depth: depth) }
    /// "0a12:0001" (out of line: the open and its "no device" line use it).
    var id: String { @inline(never) get { built("\(hex4(vendor)):\(hex4(product))") } }

    /// What sysfs says about it, readable without opening the device.
    var productName: String { readSmallFile(built("/sys/bus/usb/devices/\(path)/product")) ?? "?" }
    var kernelDriver: String? {
        let link = sysfs(":1.0/driver")
        // Read into the stack: no array for the link.
        return withUnsafeTemporaryAllocation(byteCount: 512, alignment: 1) { buffer -> String? in
            let n = readlink(link.pointer, buffer.baseAddress!.assumingMemoryBound(to: CChar.self), 511)
            guard n > 0 else { return nil }
            // The link's last component: "…/drivers/btusb" names btusb.
            var end = n
            while end > 0, buffer[end - 1] == 0x2F { end -= 1 }
            var start = end
            while start > 0, buffer[start - 1] != 0x2F { start -= 1 }
            guard start < end else { return nil }
            return String(repairingUTF8: UnsafeRawBufferPointer(rebasing: buffer[start ..< end]))
        }
    }

    /// "/sys/bus/usb/devices/1-1.2" and `leaf` after it: one of the device's files in sysfs.
    func sysfs(_ leaf: StaticString) -> CPathBuffer {
        var file = CPathBuffer()
        file.append("/sys/bus/usb/devices/")
        file.append(string: path)
        file.append(leaf)
        return file
    }

    func matches(_ spec: TransportSpec) -> Bool {
        switch spec {
        case .usbAny: isBluetooth
        case .usbID(let v, let p): vendor == v && product == p
        case .usbPath(let b, let p): bus == b && p == USBPorts(packed: ports, depth: depth)
        default: false
        }
    }
}

/// "1-1.2": a bus and its ports as sysfs names them.
func usbPath(bus: Int, ports: USBPorts) -> String {
    usbPath(bus: bus, packed: ports.packed, depth: ports.depth)
}

@inline(never)
func usbPath(bus: Int, packed: UInt64, depth: Int) -> String {
    var text = BuiltText.Builder()
    text.appendInterpolation(bus)
    text.appendLiteral("-")
    for index in 0..<depth {
        if index > 0 { text.appendLiteral(".") }
        text.appendInterpolation(Int((packed >> (8 * UInt64(index))) & 0xFF))
    }
    return BuiltText(text).string
}
