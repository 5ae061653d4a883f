import Testing
import ITCBOptions

/// Text made from bytes by our own repair (Sources/ITCBOptions/RepairedText.swift)
/// is the text the standard library's `String(decoding:as:)` and
/// `String(cString:)` make: the same bytes for well-formed input and one U+FFFD
/// per maximal subpart of each ill-formed sequence (Unicode §3.9).
@Suite struct RepairedTextTests {
    static func standard(_ bytes: [UInt8]) -> [UInt8] { Array(String(decoding: bytes, as: UTF8.self).utf8) }
    static func ours(_ bytes: [UInt8]) -> [UInt8] { Array(String(repairingUTF8: bytes).utf8) }

    /// Unicode 15 §3.9, Table 3-8 and the boundary cases of Table 3-7.
    @Test func specificationVectorsRepairAsTheStandardLibraryDoes() {
        let vectors: [[UInt8]] = [
            [], [0x41], [0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x8E, 0xB1],
            [0x61, 0xF1, 0x80, 0x80, 0xE1, 0x80, 0xC2, 0x62, 0x80, 0x63, 0x80, 0xBF, 0x64],  // Table 3-8
            [0xC0, 0xAF], [0xC1, 0xBF], [0xE0, 0x80, 0xAF], [0xE0, 0x9F, 0xBF], [0xED, 0xA0, 0x80],
            [0xED, 0x9F, 0xBF], [0xF0, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF],
            [0xF5, 0x80], [0xFF], [0xFE, 0xFF], [0x80], [0xBF, 0x41], [0xE2, 0x82], [0xF0, 0x9F, 0x8E],
            [0xE2, 0x41, 0x82], [0xF0, 0x9F, 0x41, 0x8E], [0x00, 0xFF, 0x00],
        ]
        for bytes in vectors { #expect(Self.ours(bytes) == Self.standard(bytes), "\(bytes)") }
    }

    /// Random bytes, weighted towards lead and continuation bytes so that most
    /// sequences are nearly well-formed (a fixed seed: the run is repeatable).
    @Test func randomBytesRepairAsTheStandardLibraryDoes() {
        var state: UInt64 = 0x2026_1129
        func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state >> 33
        }
        let pool: [UInt8] = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF,
                             0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF]
        for _ in 0 ..< 20_000 {
            let count = Int(next() % 9)
            let bytes = (0 ..< count).map { _ in next() % 4 == 0 ? UInt8(truncatingIfNeeded: next()) : pool[Int(next() % UInt64(pool.count))] }
            #expect(Self.ours(bytes) == Self.standard(bytes), "\(bytes)")
        }
    }

    @Test func cStringsRepairAsTheStandardLibraryDoes() {
        let bytes: [CChar] = [0x61, -0x3E, 0x62, -0x01, 0x00, 0x63]
        let made = bytes.withUnsafeBufferPointer { String(repairingCString: $0.baseAddress!) }
        let standard = bytes.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        #expect(Array(made.utf8) == Array(standard.utf8))
    }

    /// A Substring's bytes are its own, not its String's.
    @Test func substringBytesAreTheSlice() {
        let text = "--transport=usb:0bda:8771"
        let value = text.split(separator: "=")[1]
        #expect(withBytes(value) { Array($0) } == Array("usb:0bda:8771".utf8))
        #expect(withBytes("é"[...]) { Array($0) } == [0xC3, 0xA9])
    }
}
