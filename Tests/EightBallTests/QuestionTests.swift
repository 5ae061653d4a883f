import BLEHost
import Testing
import TestSupport
@testable import EightBall

@Suite struct QuestionTests {
    func valid(_ bytes: [UInt8]) -> Bool { bytes.withRaw { Question.isValid($0) } }

    @Test func endsWithQuestionMark() {
        #expect(valid(Array("Will it rain?".utf8)))
        #expect(valid(Array("?".utf8)))
        #expect(valid(Array("Ça va ? 🎱?".utf8)))
        #expect(!valid(Array("Will it rain".utf8)))
        #expect(!valid(Array("Will it rain? ".utf8)))
        #expect(!valid(Array("¿".utf8)))
        #expect(!valid([]))
    }

    @Test func mustBeValidUTF8() {
        #expect(!valid([0xFF, 0x3F]))  // invalid byte
        #expect(!valid([0xC0, 0xAF, 0x3F]))  // overlong "/"
        #expect(!valid([0xED, 0xA0, 0x80, 0x3F]))  // UTF-16 surrogate
        #expect(!valid([0xF4, 0x90, 0x80, 0x80, 0x3F]))  // beyond U+10FFFF
        #expect(!valid([0xE2, 0x82, 0x3F]))  // truncated sequence
        #expect(!valid([0x80, 0x3F]))  // lone continuation
        #expect(valid([0xF0, 0x9F, 0x8E, 0xB1, 0x3F]))  // 🎱?
    }

    @Test func atMost512Bytes() {
        #expect(valid([UInt8](repeating: 0x61, count: 511) + [0x3F]))
        #expect(!valid([UInt8](repeating: 0x61, count: 512) + [0x3F]))
    }
}
