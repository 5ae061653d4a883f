import Testing
@testable import ITCBDongle

/// The one escaping function for text from a peer, a controller or a file.
@Suite struct UntrustedTextTests {
    func escaped(_ bytes: [UInt8]) -> String { bytes.withUnsafeBytes { UntrustedText.escaped($0) } }

    @Test func printableTextIsLeftAlone() {
        #expect("Will it rain?".escaped == "Will it rain?")
        #expect("Ça va? ¿Sí? 8-Ball 🎱 東京".escaped == "Ça va? ¿Sí? 8-Ball 🎱 東京")
        #expect("".escaped == "")
    }

    @Test func controlsBecomeVisibleEscapes() {
        // The forged-line name from the hostile-peer report: no raw ESC, no newline.
        #expect("E\u{1B}[2J\nitcb-dongle: error: X".escaped == "E\\x1b[2J\\x0aitcb-dongle: error: X")
        #expect("\u{00}\u{07}\t\r\u{7F}".escaped == "\\x00\\x07\\x09\\x0d\\x7f")
        // C1 controls (U+009B is a one-character CSI), bidi controls, line separators.
        #expect("a\u{9B}31mRED\u{85}".escaped == "a\\u009b31mRED\\u0085")
        #expect("evil\u{202E}txt.exe\u{2066}\u{2069}\u{200F}\u{061C}".escaped
                == "evil\\u202etxt.exe\\u2066\\u2069\\u200f\\u061c")
        #expect("one\u{2028}two\u{2029}".escaped == "one\\u2028two\\u2029")
        // A backslash is escaped too, so every escape seen was made here.
        #expect("C:\\x1b".escaped == "C:\\\\x1b")
    }

    @Test func invalidUTF8IsShownByteByByte() {
        #expect(escaped([0x41, 0xFF, 0x42]) == "A\\xffB")
        #expect(escaped([0xC3]) == "\\xc3")                      // truncated sequence
        #expect(escaped([0xC0, 0xAF]) == "\\xc0\\xaf")           // overlong '/'
        #expect(escaped([0xED, 0xA0, 0x80]) == "\\xed\\xa0\\x80") // a UTF-16 surrogate
        #expect(escaped([0xF4, 0x90, 0x80, 0x80]) == "\\xf4\\x90\\x80\\x80") // past U+10FFFF
        #expect(escaped([0xE2, 0x82, 0xAC, 0xE2, 0x82]) == "€\\xe2\\x82")
        #expect(escaped([0xC2, 0x9B]) == "\\u009b")
    }

    /// Whole lines of ours keep their backslashes and tabs; a value missed
    /// still cannot move the cursor or start a line.
    @Test func wholeLinesKeepBackslashesAndTabs() {
        #expect(UntrustedText.line("name\tC0:12:34:56:78:9A\t-40 dBm") == "name\tC0:12:34:56:78:9A\t-40 dBm")
        #expect(UntrustedText.line("a \\x1b b") == "a \\x1b b")
        #expect(UntrustedText.line("bad \u{1B}[2J\nforged") == "bad \\x1b[2J\\x0aforged")
        // Escaping a value once, then its line: nothing changes the second time.
        let value = "E\u{1B}\u{202E}\\".escaped
        #expect(UntrustedText.line("seen: \"\(value)\"") == "seen: \"\(value)\"")
    }

    /// Every byte value, alone and after a lead byte: the output is never a
    /// control character, C1, bidi control or invalid UTF-8.
    @Test func nothingUnsafeSurvives() {
        for first in 0...255 {
            for second in [0x00, 0x1B, 0x41, 0x80, 0x9B, 0xAE, 0xBF, 0xC2, 0xFF] {
                let out = escaped([UInt8(first), UInt8(second), 0x80, 0x80])
                for scalar in out.unicodeScalars {
                    #expect(!UntrustedText.needsEscape(scalar.value, wholeLine: true), "\(first) \(second): \(out)")
                }
                #expect(!out.unicodeScalars.contains("\u{FFFD}"), "\(first) \(second): \(out)")
            }
        }
    }
}
