import CLibUSB
import Testing
import BLEHost
@testable import ITCBDongle

/// The platform layer's pure parts: --transport parsing, USB endpoint mapping,
/// the udev matcher and the JSON output encoding.
@Suite struct TransportSpecTests {
    /// libusb_get_port_numbers fills a 7-byte buffer from its end and moves the
    /// ports to its start (libusb core.c): for 3-1 the word holds port 1 at byte
    /// 0 and again at byte 6. Only the first `depth` bytes are the path; with
    /// the stale byte kept, usb:3-1 matched no device (CI, 2026-11-29).
    @Test func portsFromLibUSBKeepOnlyTheirDepth() {
        var word: UInt64 = 0
        withUnsafeMutableBytes(of: &word) { buffer in
            buffer[6] = 1  // where libusb wrote it
            buffer[0] = 1  // where it moved it
        }
        #expect(USBPorts.kept(word, depth: 1) == 1)
        #expect(USBPorts(packed: USBPorts.kept(word, depth: 1), depth: 1) == [1])
        #expect(USBPorts.kept(0x0007_0605_0403_0201, depth: 7) == 0x0007_0605_0403_0201)
        #expect(USBPorts.kept(0x0004_0000_0000_0402, depth: 2) == 0x0402)
        #expect(USBPorts.kept(0x0101, depth: 0) == 0)
    }

    @Test func validSelectors() throws {
        #expect(try TransportSpec.parse("usb").get() == .usbAny)
        #expect(try TransportSpec.parse("usb:0a12:0001").get() == .usbID(vendor: 0x0A12, product: 0x0001))
        #expect(try TransportSpec.parse("usb:0A5C:21E8").get() == .usbID(vendor: 0x0A5C, product: 0x21E8))
        #expect(try TransportSpec.parse("usb:1-1").get() == .usbPath(bus: 1, ports: [1]))
        #expect(try TransportSpec.parse("usb:3-1.4.2").get() == .usbPath(bus: 3, ports: [1, 4, 2]))
        #expect(try TransportSpec.parse("tcp:127.0.0.1:9001").get() == .tcp(host: "127.0.0.1", port: 9001))
        #expect(try TransportSpec.parse("tcp:[::1]:9001").get() == .tcp(host: "::1", port: 9001))
        #expect(try TransportSpec.parse("tcp:localhost:1").get() == .tcp(host: "localhost", port: 1))
        #expect(try TransportSpec.parse("serial:/dev/ttyACM0").get() == .serial(path: "/dev/ttyACM0", baud: nil, flow: nil))
        #expect(try TransportSpec.parse("serial:/dev/ttyUSB1@1000000").get() == .serial(path: "/dev/ttyUSB1", baud: 1_000_000, flow: nil))
        #expect(try TransportSpec.parse("serial:/dev/serial1@921600,noflow").get() == .serial(path: "/dev/serial1", baud: 921_600, flow: false))
        #expect(try TransportSpec.parse("serial:/dev/serial1,flow").get() == .serial(path: "/dev/serial1", baud: nil, flow: true))
    }

    @Test func invalidSelectorsExplainThemselves() {
        for bad in ["", "usb:", "usb:0a12", "usb:0a12:1", "usb:zzzz:0001", "usb:1-", "usb:0-1", "usb:1-1..2",
                    "usb:1-300", "tcp:", "tcp:host", "tcp:host:0", "tcp:host:70000", "tcp::1234", "serial:",
                    "serial:/dev/ttyS0@12345", "serial:/dev/serial1,rtscts", "serial:/dev/serial1@921600,", "serial:,flow",
                    "bluetooth", "USB", "tcp:127.0.0.1:9001,flow", "tcp:host:9001@115200"] {
            guard case .failure(let error) = TransportSpec.parse(bad) else {
                Issue.record("'\(bad)' was accepted")
                continue
            }
            #expect(!error.description.isEmpty && !error.description.contains("\n"))
        }
        guard case .failure(let flowOnTCP) = TransportSpec.parse("tcp:127.0.0.1:9001,noflow") else { return }
        #expect(flowOnTCP.description.contains("serial port's"))
    }
}

@Suite struct USBEndpointTests {
    // The endpoint walk itself is the core's (BLEHostTests/USBDescriptorTests).
    @Test func reasonsInWords() {
        #expect(describing(.missingEndpoints(interruptIn: true, bulkIn: true, bulkOut: false)).string
            == "interface 0 lacks the bulk OUT endpoint(s) of a Bluetooth controller")
        #expect(describing(.truncated(totalLength: 177, read: 100)).string == "it announces 177 bytes (wTotalLength) but 100 came")
    }

    @Test func endpointKinds() {
        #expect(USBEndpointKind(attributes: 0x03, address: 0x81) == .interruptIn)
        #expect(USBEndpointKind(attributes: 0x03, address: 0x01) == .other)
        #expect(USBEndpointKind(attributes: 0x02, address: 0x82) == .bulkIn)
        #expect(USBEndpointKind(attributes: 0x02, address: 0x02) == .bulkOut)
        #expect(USBEndpointKind(attributes: 0x01, address: 0x83) == .other)
    }
}

@Suite struct UdevMatchTests {
    static func device(class c: UInt8, interface0 i: UInt8, interface1: UInt8? = nil) -> [UInt8] {
        let sub: (UInt8) -> UInt8 = { $0 == 0xE0 ? 1 : 0 }
        var d: [UInt8] = [18, 1, 0x00, 0x02, c, sub(c), sub(c), 64, 0x12, 0x0A, 0x01, 0x00, 0x00, 0x01, 0, 0, 0, 1]
        var body: [UInt8] = [9, 4, 0, 0, 1, i, sub(i), sub(i), 0, 7, 5, 0x81, 3, 16, 0, 1]
        if let interface1 { body += [9, 4, 1, 0, 1, interface1, sub(interface1), sub(interface1), 0] }
        d += [9, 2, UInt8(9 + body.count), 0, 1, 1, 0, 0x80, 50] + body
        return d
    }

    @Test func bluetoothOnDeviceOrInterfaceZeroOnly() {
        #expect(UdevMatch.isBluetooth(Self.device(class: 0xE0, interface0: 0xE0)))
        #expect(UdevMatch.isBluetooth(Self.device(class: 0x00, interface0: 0xE0)))
        #expect(!UdevMatch.isBluetooth(Self.device(class: 0xEF, interface0: 0xFF, interface1: 0xE0)))
        #expect(!UdevMatch.isBluetooth(Self.device(class: 0x00, interface0: 0x08)))
        #expect(!UdevMatch.isBluetooth([]))
        #expect(!UdevMatch.isBluetooth(Array(Self.device(class: 0x00, interface0: 0xE0).prefix(20))))
        var broken = Self.device(class: 0x00, interface0: 0xE0)
        broken[18] = 0  // a zero-length descriptor must not loop forever
        #expect(!UdevMatch.isBluetooth(broken))
    }

    /// BCM20702 dongles (0a5c:21e8) show vendor class FF/01/01: taken because a chipset claims the VID:PID.
    @Test func vendorClassOnlyOnADongleAChipsetClaims() {
        func vendorClass(vendor: UInt16, product: UInt16, onDevice: Bool) -> [UInt8] {
            var d = Self.device(class: onDevice ? 0xFF : 0x00, interface0: 0xFF)
            if onDevice { d[5] = 1; d[6] = 1 } else { d[33] = 1; d[34] = 1 }  // subclass, protocol
            d[8] = UInt8(vendor & 0xFF); d[9] = UInt8(vendor >> 8); d[10] = UInt8(product & 0xFF); d[11] = UInt8(product >> 8)
            return d
        }
        #expect(UdevMatch.isBluetooth(vendorClass(vendor: 0x0A5C, product: 0x21E8, onDevice: true)))
        #expect(UdevMatch.isBluetooth(vendorClass(vendor: 0x0A5C, product: 0x21E8, onDevice: false)))
        #expect(UdevMatch.isBluetooth(vendorClass(vendor: 0x0B05, product: 0x17CB, onDevice: true)))
        #expect(!UdevMatch.isBluetooth(vendorClass(vendor: 0x0A12, product: 0x0001, onDevice: true)))
        #expect(!UdevMatch.isBluetooth(vendorClass(vendor: 0x1234, product: 0x5678, onDevice: false)))
        // Linux's vendor+class rows: any product of a patchram vendor with FF/01/01.
        #expect(UdevMatch.isBluetooth(vendorClass(vendor: 0x0489, product: 0xFFFE, onDevice: false)))
        #expect(UdevMatch.isBluetooth(vendorClass(vendor: 0x413C, product: 0x0001, onDevice: true)))
        // A MediaTek id of a patchram vendor: by VID:PID over E0/01/01, Broadcom's by FF/01/01 (btusb's order).
        #expect(firmwareGuess(vendor: 0x0489, product: 0xE111)?.family == "MediaTek")
        #expect(firmwareGuess(vendor: 0x0489, product: 0xE111, vendorClass: true)?.family == "Broadcom")
        #expect(firmwareGuess(vendor: 0x0489, product: 0xFFFE) == nil)
    }
}

@Suite struct OutputTests {
    @Test func jsonStringsAreEscaped() {
        #expect(jsonString("plain") == "\"plain\"")
        #expect(jsonString("say \"hi\"\\ \n\t") == "\"say \\\"hi\\\"\\\\ \\n\\t\"")
        #expect(jsonString("\u{01}é🎱") == "\"\\u0001é🎱\"")
        // DEL, C1 and bidi controls as \u escapes: the same string to a JSON reader.
        #expect(jsonString("a\u{7F}\u{9B}31m\u{202E}z") == "\"a\\u007f\\u009b31m\\u202ez\"")
    }

    /// What the core's formatter writes into a Linux log line, after the "itcb-dongle: info: " prefix.
    func described(_ event: HostEvent) -> String {
        var line = LogLine(.info)
        let host = Host(configuration: HostConfiguration(role: .peripheral), database: GATTDatabase())
        event.describe(into: &line, host: host)
        return String(line.buffer.contents.string.dropFirst("itcb-dongle: info: ".count))
    }

    @Test func logValuesKeepOneLine() {
        func value(_ bytes: [UInt8], room: Int? = nil) -> [UInt8] {
            var line = LogLine(.info)
            let prefix = line.buffer.count
            if let room { line.buffer.truncate(to: 0); _ = line.buffer.contents.appendZeros(768 - room - 1) }
            let start = room == nil ? prefix : 768 - room! - 1
            bytes.withUnsafeBytes { line.value($0) }
            return Array(line.buffer.contents.array[start...])
        }
        #expect(value(Array("Will it rain?".utf8)) == Array("Will it rain?".utf8))
        #expect(value([0x41, 0x0A, 0x42, 0x7F, 0x43, 0x00]) == Array("A\\x0aB\\x7fC\\x00".utf8))
        // A long clean run, then a control character late in the value.
        let long = Array(repeating: UInt8(ascii: "x"), count: 100) + [0x0D] + Array("end".utf8)
        #expect(value(long) == Array(repeating: UInt8(ascii: "x"), count: 100) + Array("\\x0dend".utf8))
        // Cut where the line is full, one byte kept for its newline; an escape
        // is kept whole or left out, a character never cut.
        #expect(value(Array("abcdef".utf8), room: 4) == Array("abcd".utf8))
        #expect(value([0x01, 0x41, 0x42], room: 2) == [])
        #expect(value([0x01, 0x41, 0x42], room: 5) == Array("\\x01A".utf8))
        #expect(value(Array("aé".utf8), room: 2) == Array("a".utf8))
    }

    @Test func cccdValuesAreDescribedBitByBit() {
        func cccd(_ value: UInt16) -> String { described(.subscriptionChanged(connection: 0x40, attribute: 0x2A, value: value)) }
        #expect(cccd(0x0000) == "unsubscribed (notifications and indications off): handle 0x40, attribute 0x2a")
        #expect(cccd(0x0001) == "subscribed to notifications: handle 0x40, attribute 0x2a")
        #expect(cccd(0x0002) == "subscribed to indications: handle 0x40, attribute 0x2a")  // BlueZ on Service Changed
        #expect(cccd(0x0003) == "subscribed to notifications and indications: handle 0x40, attribute 0x2a")
    }

    @Test func hostEventsAreDescribedWithThisBoardsNames() {
        let peer = BDAddress(string: "C0:12:34:56:78:9A", type: 1)!
        #expect(described(.connected(connection: 0x40, peer: peer, isCentral: false, interval: 6))
                == "connected: handle 0x40 from C0:12:34:56:78:9A (random), interval 7.5 ms")
        #expect(described(.connectionUpdated(connection: 0x41, interval: 24, latency: 0, timeout: 42))
                == "connection 0x41 parameters: interval 30.0 ms, latency 0, timeout 420 ms")
        #expect(described(.connectionUpdated(connection: 0x41, interval: 7, latency: 1, timeout: 10))
                == "connection 0x41 parameters: interval 8.75 ms, latency 1, timeout 100 ms")
        #expect(described(.disconnected(connection: 0x40, reason: 0x13))
                == "disconnected: handle 0x40, remote user terminated connection (0x13)")
        #expect(described(.controllerTimeout(opcode: 0x0C03, resetting: true)) == "controller did not answer HCI command \(hciCommandName(0x0C03)); resetting it")
        #expect(described(.hardwareError(code: 0x0A, resetting: true)) == "controller hardware error 0x0A; resetting it")
        // True lines: no reset said when none follows, no code or reason the controller did not give.
        #expect(described(.controllerTimeout(opcode: 0x0C03, resetting: false)) == "controller did not answer HCI command \(hciCommandName(0x0C03))")
        #expect(described(.hardwareError(code: nil, resetting: false)) == "controller hardware error (the event carries no code)")
        #expect(described(.disconnected(connection: 0x40, reason: nil))
                == "disconnected: handle 0x40 (link dropped: the controller is being reset)")
        #expect(described(.requestsDropped(connection: 0x41, reason: .attPipelined, unreported: 3))
                == "dropped an ATT request on handle 0x41: the peer did not wait for the answer to its previous one (one at a time) (and 3 more request(s) from this peer dropped without a line; at most one line a minute)")
        #expect(described(.mtuExchanged(connection: 0x40, mtu: 247)) == "MTU 247 on handle 0x40")
        #expect(HostEvent.advertisingReport.severity == .trace)
    }

    @Test func addressesRoundTrip() {
        let address = BDAddress(string: "C0:12:34:56:78:9A", type: 1)
        #expect(address?.string == "C0:12:34:56:78:9A")
        #expect(BDAddress(string: "C0:12:34:56:78", type: 1) == nil)
        #expect(BDAddress(string: "C0:12:34:56:78:9G", type: 1) == nil)
    }
}
