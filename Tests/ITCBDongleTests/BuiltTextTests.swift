import Testing
import BLEHost
@testable import ITCBDongle

/// The text the platform builds without String interpolation, String(Double)
/// or the stdlib's joined: the same bytes as those print.
@Suite struct BuiltTextTests {
    @Test func builtTextPrintsAsStringInterpolation() {
        let name = "dongle", small: UInt8 = 200, negative: Int8 = -70, wide = UInt64.max, flag = true
        #expect(built("\(name): \(small) \(negative) \(wide) \(flag) \(Int.min)") == "\(name): \(small) \(negative) \(wide) \(flag) \(Int.min)")
        #expect(built("0x\(hex: UInt16(0x2A)) 0x\(hex: UInt64(0)) 0x\(hex: UInt64(0xDEADBEEF00))") == "0x2a 0x0 0xdeadbeef00")
        var text: BuiltText = "a"
        text.append(" b \(1)")
        text.spaces(2)
        text.spaces(-1)
        #expect(text.string == "a b 1  ")
    }

    /// doubleText against String(Double): shortest round trip, Swift's layout.
    @Test func doubleTextPrintsAsDescription() {
        var values: [Double] = [0.1, 0.5, 1e-5, 1e-4, 0.0001234, 1e16, 1e15, 123456.789, 0.3, -2.5e-7, 1.0 / 3,
                                9007199254740992, 9007199254740994, 9e15, 1e300, .leastNonzeroMagnitude, -1.5, 7.5, 1000, 1e22,
                                600.0000001, .greatestFiniteMagnitude, .leastNormalMagnitude, .nan, .infinity,
                                -.infinity, 0, -0.0,
                                // Where printf's nearest digits of the shortest length do not read back.
                                7.120236347223045e-307, 7.291122019556398e-304, 4.887898181599368e-150]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<20_000 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            values.append(Double(bitPattern: state))
            values.append(Double(state >> 44) / 1000)
        }
        for value in values {
            #expect(doubleText(value) == String(value), "\(value)")
        }
    }

    /// formatNumber: a whole number below 10^15 as Int prints it (0 for -0), anything else as doubleText.
    @Test func formatNumberDropsWholeFraction() {
        var values: [Double] = [0, -0.0, 5, -5, 100, 0.5, -0.5, 600.1, 86400, 123456789012345, -123456789012345, 1e15,
                                1e16, 1e-7, -1e300, 9007199254740992, .nan, .infinity, -.infinity]
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        for _ in 0..<5_000 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            values.append(Double(state >> 40) / 8)
            values.append(-Double(state >> 14))
        }
        for value in values {
            let expected = abs(value) < 1e15 && value == Double(Int64(value)) ? String(Int(value)) : String(value)
            #expect(formatNumber(value) == expected, "\(value)")
        }
    }

    @Test func joinedAndAddresses() {
        #expect(["a", "b", "c"].joined(separator: ", ") == "a, b, c")
        #expect([String]().joined(separator: ", ") == "")
        #expect(["x"].joined() == "x")
        #expect(usbPath(bus: 3, ports: [1, 4, 2]) == "3-1.4.2")
        #expect(hex4(0) == "0000" && hex4(0x2A) == "002a" && hex4(0xBEEF) == "beef")
        #expect(hex(0) == "00" && hex(0xA5) == "A5")
        let write: [UInt8] = [0x40, 0x20, 0x09, 0x00, 0x05, 0x00, 0x04, 0x00, 0x12, 0x0C, 0x00, 0x41]
        #expect(write.withUnsafeBytes { attNarration($0, outgoing: false)?.string } == "ATT < Write Request, handle 0x000c, 1 byte(s), link 0x0040")
        let error: [UInt8] = [0x40, 0x00, 0x09, 0x00, 0x05, 0x00, 0x04, 0x00, 0x01, 0x0A, 0x03, 0x00, 0x0E]
        #expect(error.withUnsafeBytes { attNarration($0, outgoing: true)?.string } == "ATT > Error Response to Read Request, handle 0x0003, error 0x0E, link 0x0040")
        #expect(BDAddress(value: 0xAABBCCDDEE0F, type: 0).string == "AA:BB:CC:DD:EE:0F")
        let bytes: [UInt8] = [0x00, 0x7F, 0xFF]
        #expect(bytes.withUnsafeBytes { hexDump($0) } == "00 7F FF")
        #expect(jsonString("a\"b\\c\n\r\t\u{1B}\u{202E}é") == "\"a\\\"b\\\\c\\n\\r\\t\\u001b\\u202eé\"")
    }
}
