import Testing
import ITCBOptions
@testable import ITCBDongle

/// Text as bytes (Sources/ITCBOptions/ByteText.swift; docs/ARCHITECTURE.md,
/// "Text is bytes"): the helpers the platform compares, cuts and sorts names
/// with instead of String's Unicode-aware ==, <, hasPrefix, split and
/// Character counts. Non-ASCII cases pin where they differ from Swift's own.
@Suite struct ByteTextTests {
    static let precomposed = "caf\u{E9}"  // é as one scalar
    static let decomposed = "cafe\u{301}"  // e + COMBINING ACUTE ACCENT

    /// The one integer parser reads numbers as the standard library's Int(_:radix:)
    /// and UInt…(_:radix:) read them (which the shipped binary no longer links).
    @Test func numbersAreReadAsTheStandardLibraryReadsThem() {
        let texts = ["0", "7", "+7", "-7", "-0", "+", "-", "", " 1", "1 ", "1.5", "0x10", "ff", "FF", "fF", "g",
                     "00042", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
                     "-9223372036854775809", "18446744073709551615", "18446744073709551616", "65535", "65536", "٣"]
        for text in texts {
            #expect(parseInteger(text[...]) == Int(text), "\(text)")
            #expect(parseUnsigned(text[...], maximum: UInt64.max) == UInt64(text), "\(text)")
            #expect(parseUnsigned(text[...], maximum: 0xFFFF).map { UInt16($0) } == UInt16(text), "\(text)")
            #expect(parseUnsigned(text[...], radix: 16, maximum: 0xFFFF).map { UInt16($0) } == UInt16(text, radix: 16), "\(text)")
            #expect(parseUnsigned(text[...], radix: 16, maximum: 0xFF).map { UInt8($0) } == UInt8(text, radix: 16), "\(text)")
        }
    }

    @Test func equalityIsByteForByte() {
        #expect(sameBytes("Kiosk", "Kiosk"))
        #expect(sameBytes("Kiosk", "Kiosk".dropFirst(0)))  // a Substring
        #expect(!sameBytes("Kiosk", "kiosk"))
        #expect(!sameBytes("Kiosk", "Kiosk "))
        #expect(sameBytes("", ""))
        #expect(sameBytes("\u{1F3B1} 8", "\u{1F3B1} 8"))
        // Swift's == takes canonically equivalent text as equal; bytes do not.
        #expect(Self.precomposed == Self.decomposed)
        #expect(!sameBytes(Self.precomposed, Self.decomposed))
    }

    @Test func asciiCaseFoldsOnlyASCII() {
        #expect(sameBytesIgnoringASCIICase("TRACE", "trace"))
        #expect(sameBytesIgnoringASCIICase("WaRn", "warn"))
        #expect(!sameBytesIgnoringASCIICase("warn", "warm"))
        #expect(!sameBytesIgnoringASCIICase("\u{C9}T\u{C9}", "\u{E9}t\u{E9}"))  // ÉTÉ, été: É is not ASCII
        #expect(!sameBytesIgnoringASCIICase("\u{130}nfo", "info"))  // İ (dotted capital I) is not I
        #expect(!sameBytesIgnoringASCIICase("[", "{"))  // 0x5B and 0x7B are 0x20 apart, not letters
        #expect("ABC\u{C9}z".lowercasedASCII() == "abc\u{C9}z")
        #expect("abc\u{E9}Z".uppercasedASCII() == "ABC\u{E9}Z")
    }

    @Test func sortingIsByScalarValue() {
        let names = ["b", "\u{E9}", "a", Self.decomposed, "B", "cafe"]
        #expect(names.sorted(by: bytesPrecede) == ["B", "a", "b", "cafe", Self.decomposed, "\u{E9}"])
        #expect(!bytesPrecede("a", "a"))
        #expect(bytesPrecede("gpiochip1", "gpiochip10"))
    }

    @Test func prefixesAndSuffixes() {
        #expect("usb:0a12:0001".hasBytePrefix("usb:"))
        #expect(!"us".hasBytePrefix("usb:"))
        #expect("x".hasBytePrefix(""))
        // A byte prefix may end inside a Character: Swift's hasPrefix says no, bytes say yes.
        #expect(!Self.decomposed.hasPrefix("cafe"))
        #expect(Self.decomposed.hasBytePrefix("cafe"))
        #expect("/run/x.prom".hasByteSuffix(".prom"))
        #expect(!"prom".hasByteSuffix(".prom"))
        #expect("prom".hasByteSuffix(""))
        #expect(Self.precomposed.hasByteSuffix("\u{E9}"))
        #expect(!Self.decomposed.hasByteSuffix("\u{E9}"))
        #expect("tcp:[::1]:9".afterBytePrefix("tcp:").map(String.init) == "[::1]:9")
        #expect("tcpx".afterBytePrefix("tcp:") == nil)
        #expect(["--json", "--role"].containsBytes("--role"))
        #expect(![Self.precomposed].containsBytes(Self.decomposed))
    }

    @Test func splitMatchesSplitSeparatorOnASCII() {
        for text in ["", ":", "a", "a:b", ":a::b:", "usb:1-1.2", "a:b:c:d", "::"] {
            for omit in [true, false] {
                for maxSplits in [0, 1, 2, Int.max] {
                    let ours = text.split(ascii: ":", maxSplits: maxSplits, omittingEmptySubsequences: omit).map(String.init)
                    let swift = text.split(separator: ":", maxSplits: maxSplits, omittingEmptySubsequences: omit).map(String.init)
                    #expect(ours == swift, "'\(text)' maxSplits \(maxSplits) omitting \(omit)")
                }
            }
        }
    }

    @Test func splitCutsBytesNotCharacters() {
        #expect("\u{E4}:b:\u{E7}".split(ascii: ":").map(String.init) == ["\u{E4}", "b", "\u{E7}"])
        // ":" followed by a combining mark is one Character: Swift's split does not cut there.
        let marked = "a:\u{301}b"
        #expect(marked.split(separator: ":").count == 1)
        #expect(marked.split(ascii: ":").map(String.init) == ["a", "\u{301}b"])
        let line = "0a12:0001  # \u{1F50C} the kiosk's dongle"
        #expect(String(line.prefix(beforeASCII: "#")) == "0a12:0001  ")
        #expect(String("no comment".prefix(beforeASCII: "#")) == "no comment")
    }

    @Test func cutAtFirstOrLast() throws {
        let first = try #require("h\u{E9}te:80:90".cut(at: ":"))
        #expect(String(first.before) == "h\u{E9}te" && String(first.after) == "80:90")
        let last = try #require("[::1]:9001".cut(at: ":", last: true))
        #expect(String(last.before) == "[::1]" && String(last.after) == "9001")
        #expect("none".cut(at: ":") == nil)
        #expect("a:".cut(at: ":", last: true).map { String($0.after) } == "")
        #expect("x@y".contains(ascii: "@") && !"xy".contains(ascii: "@"))
        #expect("\u{E9}/a/b".lastIndex(ascii: "/") == "\u{E9}/a/b".utf8.lastIndex(of: UInt8(ascii: "/")))
    }

    @Test func trimmingWhiteSpace() {
        #expect(String(" \t kiosk \r\n".trimmingWhiteSpace()) == "kiosk")
        #expect(String("   ".trimmingWhiteSpace()).isEmpty)
        #expect(String("a b".trimmingWhiteSpace()) == "a b")
        // Without a judge for them, non-ASCII spaces stay; the platform asks libc (iswspace).
        let ideographic = "\u{3000}\u{E9}t\u{E9}\u{A0}"
        #expect(String(ideographic.trimmingWhiteSpace()) == ideographic)
        #expect(String(ideographic.trimmingWhiteSpace { $0.value == 0x3000 || $0.value == 0xA0 }) == "\u{E9}t\u{E9}")
        #expect("\u{3000} \u{E9}t\u{E9}\u{3000}".trimmingCharacters() == "\u{E9}t\u{E9}")
        #expect("\u{3000}".trimmingCharacters().isEmpty)
        // A combining mark is no space: it stays, on its own if it leads.
        #expect(" \u{301}x ".trimmingCharacters() == "\u{301}x")
    }

    @Test func foldedCase() {
        #expect("Magic 8-BALL".foldedCase() == "magic 8-ball")
        // Each length of UTF-8: a two-, three- and four-byte letter, and K (U+212A) to a one-byte k.
        #expect("\u{C9}COLE \u{3A3}\u{391}\u{3A3}".foldedCase() == "\u{E9}cole \u{3C3}\u{3B1}\u{3C3}")
        #expect("\u{212A}\u{416}x\u{10400}\u{1F3B1}".foldedCase() == "k\u{436}x\u{10428}\u{1F3B1}")
        #expect("".foldedCase().isEmpty)
    }

    @Test func replacingIsByteWise() {
        #expect("raspberrypi,4/model".replacingOccurrences(of: "/", with: "-") == "raspberrypi,4-model")
        #expect("a/\u{301}".replacingOccurrences(of: "/", with: "-") == "a-\u{301}")
        #expect("x".replacingOccurrences(of: "", with: "y") == "x")
    }
}

/// The platform's names read through those helpers: options, levels, transports, columns.
@Suite struct ByteNamesTests {
    @Test func enumValuesByTheirBytes() {
        #expect(RoleOption(bytes: "central") == .central)
        #expect(RoleOption(bytes: "Central") == nil)
        #expect(AnswersOption(bytes: "text") == .text)
        #expect(AnswersOption(bytes: "t\u{E9}xt") == nil)
    }

    @Test func logLevelNamesInAnyASCIICase() {
        #expect(LogLevel(name: "TRACE") == .trace)
        #expect(LogLevel(name: "Warn") == .warning)
        #expect(LogLevel(name: "warning") == .warning)
        #expect(LogLevel(name: "\u{130}NFO") == nil)  // libc would fold İ to i; ASCII folding does not
        #expect(LogLevel(name: "info ") == nil)
    }

    @Test func transportsKeepTheirBytes() throws {
        #expect(try TransportSpec.parse("serial:/dev/tty\u{E9}@115200,noflow").get()
            == .serial(path: "/dev/tty\u{E9}", baud: 115_200, flow: false))
        #expect(try TransportSpec.parse("tcp:h\u{F4}te:9001").get() == .tcp(host: "h\u{F4}te", port: 9001))
        // ",\u{301}" is one Character to Swift, which found no comma there and took it
        // all for the path; as bytes it is the comma and an unknown option.
        for bad in ["usb:0a12:\u{FF10}001", "USB", "usb\u{301}", "serial:/dev/x,FLOW", "serial:/dev/x,flow\u{301}",
                    "serial:/dev/x,\u{301}flow"] {
            guard case .failure = TransportSpec.parse(bad) else {
                Issue.record("'\(bad)' was accepted")
                continue
            }
        }
    }

    /// --list-controllers' widths count Unicode scalars (a combining mark is one, an emoji one).
    @Test func columnWidthsCountScalars() {
        let lines = laidOut([["ab", "x"], ["e\u{301}", "y"], ["\u{E9}", "z"]])
        #expect(lines == ["ab  x", "e\u{301}  y", "\u{E9}   z"])
    }
}

/// Rows as `--list-controllers` lays them out (`columnLines`), one String a line.
func laidOut(_ rows: [[String]]) -> [String] {
    var lines: [String] = []
    columnLines(rows.flatMap { $0 }, columns: rows.first?.count ?? 1) { lines.append($0) }
    return lines
}
