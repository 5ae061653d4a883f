/// The --transport value: which controller to talk to.
enum TransportSpec: Equatable {
    /// First Bluetooth-class USB device, or one by VID:PID, or by bus-port path.
    case usbAny
    case usbID(vendor: UInt16, product: UInt16)
    case usbPath(bus: Int, ports: USBPorts)
    case tcp(host: String, port: UInt16)
    /// `serial:PATH[@BAUD][,flow|,noflow]`: nil when not given (the board decides, `BoardUART`).
    case serial(path: String, baud: Int?, flow: Bool?)

    static let help = Program.transports

    /// Parses a --transport value; the error is one line that says what is expected.
    /// Byte-wise throughout, over one array of the value's bytes with plain
    /// indices (no Substrings, no Unicode comparison in the shipped binary):
    /// every cut is at an ASCII byte, so each piece is valid UTF-8 again.
    static func parse(_ text: String) -> Result<TransportSpec, TransportSpecError> {
        withBytes(text) { parse($0) }
    }

    /// The same over the value's bytes (an argument's where argv keeps them).
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<TransportSpec, TransportSpecError> {
        let end = bytes.count
        // bytes[from..<to] is `word` (`prefix`: starts with it).
        func equals(_ from: Int, _ to: Int, _ word: StaticString, prefix: Bool = false) -> Bool {
            let count = word.utf8CodeUnitCount
            guard prefix ? to - from >= count : to - from == count else { return false }
            for i in 0 ..< count where bytes[from + i] != word.utf8Start[i] { return false }
            return true
        }
        func starts(_ prefix: StaticString) -> Bool { equals(0, end, prefix, prefix: true) }
        func piece(_ from: Int, _ to: Int) -> String { ArgText(start: bytes.baseAddress.map { $0 + from }, count: to - from).string }
        // The value (or a part) quoted in a message, from its bytes: no String made.
        func quoted(_ from: Int) -> ArgText { ArgText(start: bytes.baseAddress.map { $0 + from }, count: end - from) }
        // The first (or last) `byte` in from..<to.
        func find(_ byte: UInt8, _ from: Int, _ to: Int, last: Bool = false) -> Int? {
            var found: Int? = nil
            var index = from
            while index < to {
                if bytes[index] == byte {
                    found = index
                    if !last { break }
                }
                index += 1
            }
            return found
        }
        if end == 3, starts("usb") { return .success(.usbAny) }
        if starts("usb:") {
            // Numbers as UInt16(_:radix:) and Int(_:) read them (ByteText.swift's parseWhole).
            if let colon = find(0x3A, 4, end), find(0x3A, colon + 1, end) == nil {
                guard colon - 4 == 4, end - colon - 1 == 4,
                      let vendor = wholeNumber(bytes, 4, colon, radix: 16, maximum: 0xFFFF),
                      let product = wholeNumber(bytes, colon + 1, end, radix: 16, maximum: 0xFFFF) else {
                    return .failure(TransportSpecError("USB id must be four hex digits each, as in usb:0a12:0001"))
                }
                return .success(.usbID(vendor: UInt16(vendor), product: UInt16(product)))
            }
            if let dash = find(0x2D, 4, end), find(0x2D, dash + 1, end) == nil,
               let bus = wholeNumber(bytes, 4, dash, maximum: UInt64(Int.max)), bus > 0 {
                var ports = USBPorts(), valid = true
                var start = dash + 1
                while valid, start <= end {
                    let stop = find(0x2E, start, end) ?? end
                    if let port = wholeNumber(bytes, start, stop, maximum: 255), port > 0 { ports.append(Int(port)) } else { valid = false }
                    start = stop + 1
                }
                if valid, ports.depth <= 7 {
                    return .success(.usbPath(bus: Int(bus), ports: ports))
                }
            }
            return .failure(TransportSpecError("bad USB selector ", quoting: quoted(4), ": use usb:VID:PID (usb:0a12:0001) or usb:BUS-PORT (usb:1-1.2)"))
        }
        if starts("tcp:") {
            if equals(max(4, end - 5), end, ",flow") || equals(max(4, end - 7), end, ",noflow") || find(0x40, 4, end) != nil {
                return .failure(TransportSpecError("@BAUD, ,flow and ,noflow are a serial port's (serial:PATH[@BAUD][,flow|,noflow]); tcp takes HOST:PORT only"))
            }
            guard let colon = find(0x3A, 4, end, last: true) else {
                return .failure(TransportSpecError("tcp transport needs HOST:PORT, as in tcp:127.0.0.1:1234"))
            }
            var from = 4, to = colon
            if to - from >= 2, bytes[from] == 0x5B, bytes[to - 1] == 0x5D {  // [IPv6]
                from += 1
                to -= 1
            }
            guard to > from, let port = wholeNumber(bytes, colon + 1, end, maximum: 0xFFFF), port > 0 else {
                return .failure(TransportSpecError("tcp transport needs HOST:PORT with a port 1-65535, as in tcp:127.0.0.1:1234"))
            }
            return .success(.tcp(host: piece(from, to), port: UInt16(port)))
        }
        if starts("serial:") {
            var to = end
            var flow: Bool? = nil
            if let comma = find(0x2C, 7, end, last: true) {
                if equals(comma + 1, end, "flow") {
                    flow = true
                } else if equals(comma + 1, end, "noflow") {
                    flow = false
                } else {
                    return .failure(TransportSpecError("unknown serial option in ", quoting: quoted(0), ": use ,flow (RTS/CTS) or ,noflow, as in serial:/dev/serial1@921600,noflow"))
                }
                to = comma
            }
            var baud: Int? = nil
            if let at = find(0x40, 7, to, last: true) {
                guard let value = wholeNumber(bytes, at + 1, to, maximum: UInt64(Int.max)), SerialTransport.speed(Int(value)) != nil else {
                    return .failure(TransportSpecError("unsupported baud rate in ", quoting: quoted(0), " (use 115200, 460800, 921600, 1000000, …)"))
                }
                baud = Int(value)
                to = at
            }
            guard to > 7 else { return .failure(TransportSpecError("serial transport needs a device path, as in serial:/dev/ttyACM0")) }
            return .success(.serial(path: piece(7, to), baud: baud, flow: flow))
        }
        return .failure(TransportSpecError("unknown transport ", quoting: quoted(0), ": use ", help))
    }

    var isUSB: Bool {
        switch self {
        case .usbAny, .usbID, .usbPath: true
        default: false
        }
    }
}

/// A bus-port path's ports from the root hub (1.4.2), a byte each (the first
/// lowest; at most 7 are kept, as libusb gives them), and how many: no array in
/// the spec to grow, copy and release.
struct USBPorts: Equatable, ExpressibleByArrayLiteral {
    var packed: UInt64 = 0
    var depth = 0

    init() {}
    init(packed: UInt64, depth: Int) { (self.packed, self.depth) = (packed, depth) }
    init(arrayLiteral ports: Int...) { for port in ports { append(port) } }

    /// The first `depth` bytes of a word libusb_get_port_numbers filled: it
    /// writes the ports from the buffer's end and moves them to its start
    /// (libusb core.c), so the bytes past `depth` still hold ports. 0 for none.
    static func kept(_ word: UInt64, depth: Int) -> UInt64 {
        depth <= 0 ? 0 : depth >= 8 ? word : word & (UInt64.max >> UInt64(64 - 8 * depth))
    }

    mutating func append(_ port: Int) {
        if depth < 8 { packed |= UInt64(UInt8(truncatingIfNeeded: port)) << (8 * UInt64(depth)) }
        depth += 1
    }
}

/// bytes[from..<to] as a whole number from 0 to `maximum`, as parseUnsigned
/// (ByteText.swift) reads it: an optional sign ("-0" is 0), digits of `radix`.
private func wholeNumber(_ bytes: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int, radix: UInt64 = 10, maximum: UInt64) -> UInt64? {
    unsignedValue(parseWhole(bytes: UnsafeBufferPointer(rebasing: bytes[from..<to]), radix: radix), maximum: maximum)
}
