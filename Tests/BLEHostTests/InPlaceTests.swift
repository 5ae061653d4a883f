import Testing
@testable import BLEHost
import TestSupport

@Suite struct InPlaceConstructionTests {
    /// The same script against a host: bring-up, a central, discovery, a
    /// subscription, a write, a notification, a disconnection.
    func script(_ c: inout ScriptedController<RecordingDelegate>) -> [[UInt8]] {
        c.host.start(now: 0)
        c.answerAll()
        c.connect(handle: 0x40)
        c.answerAll()
        for pdu in ["02 f7 00", "10 01 00 ff ff 00 28", "08 01 00 ff ff 03 28", "12 0d 00 01 00", "12 0c 00 41 3f", "0a 0c 00"] {
            c.l2cap(handle: 0x40, channel: 4, hex(pdu))
            c.feed(event: hex("13 05 01 40 00 01 00"))
            _ = c.drain()
        }
        [UInt8(7)].withRaw { _ = c.host.notify(connection: 0x40, attribute: 0x0C, value: $0) }
        _ = c.drain()
        c.feed(event: hex("05 04 00 40 00 13"))
        c.answerAll()
        return c.sent
    }

    @Test func aHostBuiltInPlaceOverGarbageBehavesLikeOneFromInit() {
        var fromInit = ScriptedController(delegate: RecordingDelegate())
        var inPlace = ScriptedController(delegate: RecordingDelegate())
        let memory = UnsafeMutablePointer<Host>.allocate(capacity: 1)
        UnsafeMutableRawPointer(memory).initializeMemory(as: UInt8.self, repeating: 0xA5, count: MemoryLayout<Host>.size)
        Host.initialize(memory, configuration: inPlace.host.configuration)
        memory.pointee.buildDatabase { $0 = testDatabase() }
        swap(&inPlace.host, &memory.pointee)
        memory.deinitialize(count: 1)
        memory.deallocate()
        let expected = script(&fromInit)
        let got = script(&inPlace)
        #expect(expected.filter { $0.first == 0x02 }.count >= 7, "every request answered, and the notification")
        #expect(got == expected)
        #expect(inPlace.events.count == fromInit.events.count)
    }
}
