/// The --transport value: which controller to talk to.
enum TransportSpec: Equatable {
    /// First Bluetooth-class USB device, or one by VID:PID, or by bus-port path.
    case usbAny
    case usbID(vendor: UInt16, product: UInt16)
    case usbPath(bus: Int, ports: [Int])
    case tcp(host: String, port: UInt16)
    /// `serial:PATH[@BAUD][,flow|,noflow]`: nil when not given (the board decides, `BoardUART`).
    case serial(path: String, baud: Int?, flow: Bool?)

    static let help = Program.transports

    /// Parses a --transport value; the error is one line that says what is expected.
    static func parse(_ text: String) -> Result<TransportSpec, TransportSpecError> {
        // Byte-wise throughout (ByteText.swift): no Unicode comparison in the shipped binary.
        if sameBytes(text, "usb") { return .success(.usbAny) }
        if let rest = text.afterBytePrefix("usb:") {
            // Numbers by the one byte parser (ByteText.swift's parseWhole), read as
            // UInt16(_:radix:) and Int(_:) read them.
            if let id = rest.cut(at: ":"), !id.after.contains(ascii: ":") {
                guard id.before.utf8.count == 4, id.after.utf8.count == 4,
                      let vendor = parseUnsigned(id.before, radix: 16, maximum: 0xFFFF),
                      let product = parseUnsigned(id.after, radix: 16, maximum: 0xFFFF) else {
                    return .failure(TransportSpecError("USB id must be four hex digits each, as in usb:0a12:0001"))
                }
                return .success(.usbID(vendor: UInt16(vendor), product: UInt16(product)))
            }
            if let busPort = rest.cut(at: "-"), !busPort.after.contains(ascii: "-"), let bus = parseInteger(busPort.before), bus > 0 {
                var ports: [Int] = [], valid = true
                for piece in busPort.after.split(ascii: ".", omittingEmptySubsequences: false) {
                    guard let port = parseInteger(piece), port > 0, port < 256 else { valid = false; break }
                    ports.append(port)
                }
                if valid, ports.count <= 7 {
                    return .success(.usbPath(bus: bus, ports: ports))
                }
            }
            return .failure(TransportSpecError("bad USB selector ", quoting: String(rest), ": use usb:VID:PID (usb:0a12:0001) or usb:BUS-PORT (usb:1-1.2)"))
        }
        if let rest = text.afterBytePrefix("tcp:") {
            if rest.hasByteSuffix(",flow") || rest.hasByteSuffix(",noflow") || rest.contains(ascii: "@") {
                return .failure(TransportSpecError("@BAUD, ,flow and ,noflow are a serial port's (serial:PATH[@BAUD][,flow|,noflow]); tcp takes HOST:PORT only"))
            }
            guard let hostPort = rest.cut(at: ":", last: true) else {
                return .failure(TransportSpecError("tcp transport needs HOST:PORT, as in tcp:127.0.0.1:1234"))
            }
            var host = String(hostPort.before)
            if host.hasBytePrefix("["), host.hasByteSuffix("]") { host = String(host.utf8.dropFirst().dropLast())! }
            guard !host.isEmpty, let port = parseUnsigned(hostPort.after, maximum: 0xFFFF), port > 0 else {
                return .failure(TransportSpecError("tcp transport needs HOST:PORT with a port 1-65535, as in tcp:127.0.0.1:1234"))
            }
            return .success(.tcp(host: host, port: UInt16(port)))
        }
        if var rest = text.afterBytePrefix("serial:") {
            var flow: Bool? = nil
            if let option = rest.cut(at: ",", last: true) {
                if sameBytes(option.after, "flow") {
                    flow = true
                } else if sameBytes(option.after, "noflow") {
                    flow = false
                } else {
                    return .failure(TransportSpecError("unknown serial option in ", quoting: text, ": use ,flow (RTS/CTS) or ,noflow, as in serial:/dev/serial1@921600,noflow"))
                }
                rest = option.before
            }
            var path = String(rest)
            var baud: Int? = nil
            if let rate = rest.cut(at: "@", last: true) {
                path = String(rate.before)
                guard let value = parseInteger(rate.after), SerialTransport.speed(value) != nil else {
                    return .failure(TransportSpecError("unsupported baud rate in ", quoting: text, " (use 115200, 460800, 921600, 1000000, …)"))
                }
                baud = value
            }
            guard !path.isEmpty else { return .failure(TransportSpecError("serial transport needs a device path, as in serial:/dev/ttyACM0")) }
            return .success(.serial(path: path, baud: baud, flow: flow))
        }
        return .failure(TransportSpecError("unknown transport ", quoting: text, ": use " + help))
    }

    var isUSB: Bool {
        switch self {
        case .usbAny, .usbID, .usbPath: true
        default: false
        }
    }
}
