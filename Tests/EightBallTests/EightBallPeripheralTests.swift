import BLEHost
import Testing
import TestSupport
@testable import EightBall

/// The peripheral rules 1–5 (docs/ARCHITECTURE.md, "The 8-Ball on the air"),
/// through the host as a central would see them.
@Suite struct EightBallPeripheralTests {
    typealias Controller = ScriptedController<EightBallPeripheral>

    func ready(style: AnswerStyle = .slug, seed: UInt64 = 1) -> Controller {
        var database = GATTDatabase()
        var name = FixedBytes<8>()
        Array("Kiosk".utf8).withRaw { _ = name.append($0) }
        let logic = name.withBytes { EightBallPeripheral(name: $0, style: style, seed: seed, database: &database) }
        var c = Controller(delegate: logic, database: database)
        c.host.start(now: 0)
        for _ in 0..<3 {
            c.answerAll()
            react(&c)
        }
        return c
    }

    func react(_ c: inout Controller) {
        for event in c.events { c.delegate.handle(event, host: &c.host) }
        c.events.removeAll()
        c.delegate.poll(host: &c.host)
    }

    /// Feeds one ATT PDU from a central and returns the ATT PDUs we answer with.
    func att(_ c: inout Controller, _ handle: UInt16, _ pdu: [UInt8]) -> [[UInt8]] {
        let before = Controller.l2capPDUs(c.sent).count
        c.l2cap(handle: handle, channel: 4, pdu)
        react(&c)
        c.feed(event: [0x13, 0x05, 0x01, UInt8(handle), 0x00, 0x08, 0x00])  // give ACL credits back
        _ = c.drain()
        return Controller.l2capPDUs(c.sent).dropFirst(before).filter { $0.0 == 4 }.map(\.1)
    }

    var q: UInt16 {
        var database = GATTDatabase()
        return EightBallDatabase.build(name: UnsafeRawBufferPointer(start: nil, count: 0), into: &database).questionHandle
    }

    @Test func advertisesTheContract() {
        let c = ready()
        let data = c.sent.first { Controller.opcode($0) == HCIOpcode.leSetAdvertisingData }!
        let length = Int(data[4])
        var summary = AdvertisementSummary()
        Array(data[5..<(5 + length)]).withRaw { summary.merge($0) }
        #expect(summary.hasService(EightBallUUID.service) && summary.name.bytes == Array("Kiosk".utf8))
        #expect(summary.flags == 0x06)
    }

    @Test func questionThenSubscriptionGetsOneAnswer() {
        var c = ready()
        c.connect(handle: 0x40)
        react(&c)
        let handles = c.delegate.handles
        let write = [0x12, UInt8(handles.questionHandle), 0x00] + Array("Will it work?".utf8)
        #expect(att(&c, 0x40, write) == [hex("13")])
        // Not subscribed yet: no notification (rule 3)...
        let subscribe = [0x12, UInt8(handles.answerHandle + 1), 0x00, 0x01, 0x00]
        let afterSubscribe = att(&c, 0x40, subscribe)
        // ...until the CCCD write: its response, then the answer notification.
        #expect(afterSubscribe.count == 2 && afterSubscribe[0] == hex("13"))
        let notification = afterSubscribe[1]
        #expect(Array(notification[0..<3]) == [0x1B, UInt8(handles.answerHandle), 0x00])
        let answer = Array(notification[3...])
        #expect(answer.withRaw { Answers.index(ofSlug: $0) } != nil)
        // Reading Answer returns the same value; a second subscription sends nothing new.
        #expect(att(&c, 0x40, [0x0A, UInt8(handles.answerHandle), 0x00]) == [[0x0B] + answer])
        #expect(att(&c, 0x40, subscribe) == [hex("13")])
    }

    @Test func nonQuestionIsRefusedWithUnlikelyError() {
        var c = ready()
        c.connect(handle: 0x40)
        react(&c)
        let h = UInt8(c.delegate.handles.questionHandle)
        #expect(att(&c, 0x40, [0x12, h, 0x00] + Array("Tell me".utf8)) == [[0x01, 0x12, h, 0x00, 0x0E]])
        #expect(att(&c, 0x40, [0x12, h, 0x00, 0xFF, 0x3F]) == [[0x01, 0x12, h, 0x00, 0x0E]])
        // Nothing to read yet.
        #expect(att(&c, 0x40, [0x0A, h + 2, 0x00]) == [hex("0b")])
    }

    @Test func longQuestionThroughPreparedWrites() {
        var c = ready()
        c.connect(handle: 0x40)
        react(&c)
        let handles = c.delegate.handles
        _ = att(&c, 0x40, [0x12, UInt8(handles.answerHandle + 1), 0x00, 0x01, 0x00])
        let question = [UInt8](repeating: 0x62, count: 299) + [0x3F]
        var offset = 0
        while offset < question.count {
            let part = Array(question[offset..<min(offset + 18, question.count)])
            _ = att(&c, 0x40, [0x16, UInt8(handles.questionHandle), 0x00, UInt8(offset & 0xFF), UInt8(offset >> 8)] + part)
            offset += part.count
        }
        let out = att(&c, 0x40, hex("18 01"))
        #expect(out.count == 2 && out[0] == hex("19") && out[1][0] == 0x1B)
        #expect(c.delegate.questionBytes(0x40) == question)
    }

    @Test func eachCentralHasItsOwnState() {
        var c = ready(style: .text, seed: 9)
        c.connect(handle: 0x40)
        react(&c)
        c.connect(handle: 0x41)
        react(&c)
        let handles = c.delegate.handles
        for handle: UInt16 in [0x40, 0x41] {
            _ = att(&c, handle, [0x12, UInt8(handles.answerHandle + 1), 0x00, 0x01, 0x00])
        }
        let first = att(&c, 0x40, [0x12, UInt8(handles.questionHandle), 0x00] + Array("A?".utf8))
        let second = att(&c, 0x41, [0x12, UInt8(handles.questionHandle), 0x00] + Array("B?".utf8))
        #expect(first.count == 2 && second.count == 2)
        // An English phrase, cut to ATT_MTU - 3 = 20 bytes at the default MTU.
        let text = Array(first[1][3...])
        let phrases = (0..<20).map { index -> [UInt8] in
            var p = FixedBytes<32>()
            Answers.phrase(index, into: &p)
            return p.bytes
        }
        #expect(phrases.contains { Array($0.prefix(20)) == text })
        #expect(c.delegate.questionBytes(0x40) == Array("A?".utf8))
        #expect(c.delegate.questionBytes(0x41) == Array("B?".utf8))
        // A disconnection forgets that central's state only.
        c.feed(event: hex("05 04 00 40 00 13"))
        react(&c)
        #expect(c.delegate.questionBytes(0x40) == nil)
        #expect(c.delegate.questionBytes(0x41) != nil)
    }

    @Test func readingOtherAttributes() {
        var c = ready()
        c.connect(handle: 0x40)
        react(&c)
        // Device Name is the advertised name; Question is not readable.
        #expect(att(&c, 0x40, hex("0a 03 00")) == [[0x0B] + Array("Kiosk".utf8)])
        let h = UInt8(c.delegate.handles.questionHandle)
        #expect(att(&c, 0x40, [0x0A, h, 0x00]) == [[0x01, 0x0A, h, 0x00, 0x02]])
    }
}

extension EightBallPeripheral {
    /// The last question of a connection as bytes; nil for an unknown connection.
    mutating func questionBytes(_ connection: UInt16) -> [UInt8]? {
        guard slot(connection) != nil else { return nil }
        return withQuestion(connection: connection) { Array($0) }
    }
}
