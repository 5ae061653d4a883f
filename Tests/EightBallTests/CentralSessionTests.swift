@testable import BLEHost
import Testing
import TestSupport
@testable import EightBall

/// The asker's state machine (docs/ARCHITECTURE.md, "The 8-Ball on the air")
/// against a scripted 8-Ball:
/// discovery, subscribe → write → notification → unsubscribe, and every error path.
@Suite struct CentralSessionTests {
    enum Behaviour { case answer, reject, silent, dropLinkOnQuestion, noService }

    struct Harness: ~Copyable {
        var c = ScriptedController(delegate: NoGATTDelegate(), role: .central, database: GATTDatabase(), maxConnections: 1)
        var session: EightBallCentral
        var behaviour: Behaviour
        var reported: [CentralEvent] = []
        var requests: [[UInt8]] = []
        var linkUp = false
        var droppedOnce = false
        var acl: [[UInt8]] = []
        var served = 0
        /// The scripted 8-Ball advertises at -50 dBm whenever scanning starts; off
        /// when a test plays its own sequence of reports.
        var autoAdvertise = true
        /// The GAP Device Name the scripted 8-Ball serves (handles 1-5: the GAP
        /// service, 0x2A00's value at 3), the name the session read, and the
        /// platform's verdict on it.
        var gapName = "B8"
        var nameRead: String? = nil
        var acceptName: (String) -> Bool = { _ in true }
        /// The scripted 8-Ball freezes (as under SIGSTOP: its controller keeps the
        /// link, its host answers nothing more) at the first request this picks.
        var freezeAt: ([UInt8]) -> Bool = { _ in false }
        var frozen = false
        /// Its controller never completes an LE Create Connection.
        var unreachable = false
        /// The ATT MTU the scripted 8-Ball's server offers (an iPhone's 247 by
        /// default; Bumble and Android 517).
        var serverMTU: UInt16 = 247

        init(_ behaviour: Behaviour, settings: CentralSettings = CentralSettings(), autoAdvertise: Bool = true,
             freezeAt: @escaping ([UInt8]) -> Bool = { _ in false }, unreachable: Bool = false,
             serverMTU: UInt16 = 247) {
            self.behaviour = behaviour
            self.serverMTU = serverMTU
            self.autoAdvertise = autoAdvertise
            self.freezeAt = freezeAt
            self.unreachable = unreachable
            session = EightBallCentral(settings: settings)
            c.host.start(now: 0)
            c.answerAll()
            session.start(host: &c.host, now: 0)
            pump()
        }

        static func uuid(_ u: BLEUUID) -> [UInt8] {
            var b = FixedBytes<16>()
            u.write128(to: &b)
            return b.bytes
        }

        /// What the scripted 8-Ball answers to one ATT request.
        mutating func serve(_ pdu: [UInt8]) -> [[UInt8]] {
            requests.append(pdu)
            frozen = frozen || freezeAt(pdu)
            if frozen { return [] }
            switch pdu[0] {
            case 0x02: return [[0x03, UInt8(serverMTU & 0xFF), UInt8(serverMTU >> 8)]]
            case 0x06 where pdu[7] == 0x00 && pdu[8] == 0x18: return [hex("07 01 00 05 00")]
            case 0x08 where pdu[1] == 0x01: return [hex("09 07 02 00 02 03 00 00 2a")]
            case 0x0A where pdu[1] == 0x03: return [[0x0B] + Array(gapName.utf8)]
            case 0x06: return behaviour == .noService ? [hex("01 06 01 00 0a")] : [hex("07 0a 00 0f 00")]
            case 0x08 where pdu[1] == 0x0A:
                return [[0x09, 21, 0x0B, 0x00, 0x08, 0x0C, 0x00] + Self.uuid(EightBallUUID.question)
                        + [0x0D, 0x00, 0x12, 0x0E, 0x00] + Self.uuid(EightBallUUID.answer)]
            case 0x08: return [[0x01, 0x08, pdu[1], pdu[2], 0x0A]]
            case 0x04: return [hex("05 01 0f 00 02 29")]
            case 0x12 where pdu[1] == 0x0F: return [hex("13")]
            case 0x12, 0x18:
                switch behaviour {
                case .reject: return [[0x01, pdu[0], 0x0C, 0x00, 0x0E]]
                case .silent: return [[pdu[0] + 1]]
                case .dropLinkOnQuestion where !droppedOnce:
                    droppedOnce = true
                    linkUp = false
                    c.feed(event: hex("05 04 00 40 00 08"))
                    return []
                default: return [[pdu[0] + 1], Array("\u{1B}\u{0E}\u{00}SLUG-ANSWER-05".utf8)]
                }
            case 0x16: return [[0x17] + Array(pdu[1...])]
            default: return [[0x01, pdu[0], 0x00, 0x00, 0x06]]
            }
        }

        /// Runs the host, the session and the scripted peer until nothing moves.
        mutating func pump(now: UInt64 = 0) {
            c.now = now
            c.host.tick(now: now)
            c.takeEvents()
            for _ in 0..<200 {
                var moved = false
                let events = c.events
                var reports = c.reports[...]
                c.events.removeAll()
                c.reports.removeAll()
                for event in events {
                    moved = true
                    // As the driver does: each event handled as it is taken, its report beside it.
                    if case .advertisingReport = event { c.host.advertisingReport = reports.removeFirst() }
                    if case .scanning(true) = event, autoAdvertise, !linkUp, session.phaseIsScanning { advertise() }
                    session.handle(event, host: &c.host, now: now)
                }
                session.tick(host: &c.host, now: now)
                while let event = session.nextEvent() {
                    moved = true
                    reported.append(event)
                    if case .nameRead(let connection, let found) = event {
                        let name = found ? c.host.withClientLink(connection: connection) { $0.readValue.bytes } ?? [] : []
                        nameRead = String(decoding: name, as: UTF8.self)
                        session.nameChecked(acceptName(nameRead!), host: &c.host, now: now)
                    }
                }
                let out = c.drain()
                for packet in out {
                    moved = true
                    switch ScriptedController<NoGATTDelegate>.opcode(packet) {
                    case HCIOpcode.leCreateConnection? where unreachable:
                        c.status(HCIOpcode.leCreateConnection)
                    case HCIOpcode.leCreateConnection?:
                        c.status(HCIOpcode.leCreateConnection)
                        linkUp = true
                        c.connect(handle: 0x40, asCentral: true)
                    case HCIOpcode.disconnect?:
                        c.status(HCIOpcode.disconnect)
                        linkUp = false
                        c.feed(event: hex("05 04 00 40 00 16"))
                    case let opcode?:
                        c.complete(opcode)
                    case nil:
                        // ACL fragments: serve each L2CAP PDU once it is complete.
                        acl.append(packet)
                        let pdus = ScriptedController<NoGATTDelegate>.l2capPDUs(acl)
                        for (channel, pdu) in pdus.dropFirst(served) where channel == 4 && linkUp {
                            for response in serve(pdu) { c.l2cap(handle: 0x40, channel: 4, response, delegate: &session) }
                        }
                        served = pdus.count
                        c.feed(event: hex("13 05 01 40 00 01 00"))
                    }
                }
                if !moved { return }
            }
        }

        /// The 8-Ball's advertising report: extended, connectable, UUID + name, -50 dBm
        /// (`nameType` 8: the name shortened, as when it does not fit).
        mutating func advertise(rssi: UInt8 = 0xCE, name: String = "B8", address: UInt8 = 1, nameType: UInt8 = 9) {
            let data: [UInt8] = [2, 1, 6, 17, 7] + Self.uuid(EightBallUUID.service) + [UInt8(name.utf8.count + 1), nameType]
                + Array(name.utf8)
            report(eventType: 0x13, address: address, rssi: rssi, data: data)
        }

        /// The scan response to ADV_IND (legacy PDU in an extended report: 0x1B) carrying the complete name.
        mutating func scanResponse(name: String, address: UInt8 = 1) {
            report(eventType: 0x1B, address: address, rssi: 0xCE, data: [UInt8(name.utf8.count + 1), 9] + Array(name.utf8))
        }

        mutating func report(eventType: UInt8, address: UInt8, rssi: UInt8, data: [UInt8]) {
            let body: [UInt8] = [0x0D, 1, eventType, 0x00, 0x01, address, 2, 3, 4, 5, 0xC6, 1, 0, 0xFF, 0x7F, rssi,
                                 0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8(data.count)] + data
            c.feed(event: [0x3E, UInt8(body.count)] + body)
        }

        mutating func ask(_ text: String, now: UInt64 = 0) {
            _ = Array(text.utf8).withRaw { session.ask($0, host: &c.host, now: now) }
            pump(now: now)
        }
    }

    @Test func asksAndGetsTheAnswerInITCBOrder() {
        var h = Harness(.answer)
        h.ask("Will it work?")
        guard case .answered(let index, let value, _)? = h.reported.first(where: { if case .answered = $0 { true } else { false } }) else {
            Issue.record("no answer: \(h.reported)")
            return
        }
        #expect(index == 5 && value.bytes == Array("SLUG-ANSWER-05".utf8))
        // Subscribe (CCCD 0x0001) → question → unsubscribe (CCCD 0x0000).
        let writes = h.requests.filter { $0[0] == 0x12 }
        #expect(writes == [hex("12 0f 00 01 00"), [0x12, 0x0C, 0x00] + Array("Will it work?".utf8), hex("12 0f 00 00 00")])
        #expect(h.requests.first == hex("02 05 02"))  // our central asks for 517 (Capacity.attMTU on Linux)
        let idle = h.session.isIdleForQuestion
        #expect(idle)
    }

    @Test func longQuestionUsesPreparedWrites() {
        var h = Harness(.answer)
        h.ask(String(repeating: "q", count: 299) + "?")
        #expect(h.requests.filter { $0[0] == 0x16 }.count == 2)  // 242 bytes per part at MTU 247
        #expect(h.reported.contains { if case .answered = $0 { true } else { false } })
    }

    /// Against a server that offers 517 (as Bumble and Android do), the
    /// exchanged MTU is 517 and a 512-byte question is one Write Request of
    /// 515 bytes (sent in 27-byte ACL fragments), no Prepare Write.
    @Test func questionOf512BytesIsOneWriteAtMTU517() {
        var h = Harness(.answer, serverMTU: 517)
        let question = Array(String(repeating: "q", count: 511).utf8) + [0x3F]
        question.withRaw { _ = h.session.ask($0, host: &h.c.host, now: 0) }
        h.pump()
        #expect(h.requests.first == hex("02 05 02"))
        #expect(h.reported.contains { if case .ready(mtu: 517) = $0 { true } else { false } })
        #expect(h.requests.filter { $0[0] == 0x16 || $0[0] == 0x18 }.isEmpty)
        #expect(h.requests.contains([0x12, 0x0C, 0x00] + question))
        #expect(h.reported.contains { if case .answered = $0 { true } else { false } })
        // Fragmented to the controller's 27-byte ACL data length: 519 bytes of L2CAP in 20 packets.
        #expect(h.acl.filter { $0.count == 5 + 27 }.count >= 19)
    }

    /// The same question against an iPhone-like server (247): 512 bytes take
    /// 3 Prepare Writes (242 + 242 + 28) and an Execute Write.
    @Test func questionOf512BytesIsPreparedWritesAtMTU247() {
        var h = Harness(.answer)
        h.ask(String(repeating: "q", count: 511) + "?")
        #expect(h.requests.filter { $0[0] == 0x16 }.map(\.count) == [247, 247, 33])
        #expect(h.requests.filter { $0[0] == 0x18 } == [hex("18 01")])
        #expect(h.reported.contains { if case .answered = $0 { true } else { false } })
    }

    @Test func rejectedQuestion() {
        var h = Harness(.reject)
        h.ask("Tell me")
        #expect(h.reported.contains { if case .rejected = $0 { true } else { false } })
        #expect(h.requests.last == hex("12 0f 00 00 00"))  // still unsubscribes
    }

    @Test func silentPeripheralIsOffline() {
        var h = Harness(.silent)
        h.ask("Anyone?", now: 100)
        #expect(!h.reported.contains { if case .offline = $0 { true } else { false } })
        h.pump(now: 100 + 4_999)
        #expect(!h.reported.contains { if case .offline = $0 { true } else { false } })
        h.pump(now: 100 + 5_000)
        #expect(h.reported.contains { if case .offline = $0 { true } else { false } })
    }

    @Test func linkLostMidQuestionIsRetriedOnce() {
        var h = Harness(.dropLinkOnQuestion)
        h.ask("Are you there?")
        #expect(h.reported.contains { if case .retrying = $0 { true } else { false } })
        #expect(h.reported.contains { if case .answered = $0 { true } else { false } })
    }

    @Test func notAnEightBall() {
        var h = Harness(.noService)
        h.ask("Hello?")
        #expect(h.reported.contains { if case .notAnEightBall = $0 { true } else { false } })
        #expect(h.reported.contains { if case .finished = $0 { true } else { false } })
    }

    @Test func nothingInRangeIsNotFound() {
        var settings = CentralSettings()
        settings.rssiMax = -55
        var h = Harness(.answer, settings: settings)  // its advertiser reports -50 dBm
        h.ask("Near?")
        h.pump(now: 5_000)
        #expect(h.reported.contains { if case .notFound = $0 { true } else { false } })
        #expect(!h.reported.contains { if case .found = $0 { true } else { false } })
    }

    /// Reports of one 8-Ball (RSSI in dBm), as a controller without duplicate
    /// filtering delivers them; returns the .found events.
    static func found(_ h: inout Harness, after sequence: [Int8]) -> [ScanEntry] {
        h.ask("Near?")
        for rssi in sequence where h.session.phaseIsScanning {
            h.advertise(rssi: UInt8(bitPattern: rssi))
            h.pump()
        }
        return h.reported.compactMap { if case .found(let entry) = $0 { entry } else { nil } }
    }

    @Test func shortenedNameWaitsForTheScanResponse() {
        // "Kiosk in the lobby" is advertised as "Kiosk in" (shortened); the scan
        // response carries it whole. The central judges it only then, so --peer
        // by the full name matches and the name it reports is the full one.
        var settings = CentralSettings()
        settings.peerName = Array("Kiosk in the lobby".utf8).withUnsafeBytes { FixedBytes($0) }
        var h = Harness(.answer, settings: settings, autoAdvertise: false)
        h.ask("Full name?")
        h.advertise(name: "Kiosk in", nameType: 8)
        h.pump()
        #expect(!h.reported.contains { if case .found = $0 { true } else { false } })
        h.scanResponse(name: "Kiosk in the lobby")
        h.pump()
        let found = h.reported.compactMap { if case .found(let entry) = $0 { entry } else { nil } }
        #expect(found.map { $0.summary.name.bytes } == [Array("Kiosk in the lobby".utf8)])
        #expect(h.reported.contains { if case .answered = $0 { true } else { false } })
    }

    /// Past 29 bytes the name is shortened in the scan response too: the
    /// session reads the GAP Device Name, and goes on once the platform says
    /// it is the one wanted.
    @Test func nameShortenedEvenInTheScanResponseIsReadWhole() {
        let name = "The kiosk by the north entrance of hall B"
        var h = Harness(.answer, autoAdvertise: false)
        h.gapName = name
        h.ask("Full name?")
        h.advertise(name: "The kios", nameType: 8)
        h.report(eventType: 0x1B, address: 1, rssi: 0xCE, data: [30, 8] + Array(name.utf8.prefix(29)))
        h.pump()
        #expect(h.nameRead == name)
        #expect(h.requests.contains(hex("06 01 00 ff ff 00 28 00 18")))  // the GAP service first
        #expect(h.reported.contains { if case .answered = $0 { true } else { false } })
    }

    @Test func aFullNameThatIsNotTheOneWantedIsLeftAndTheScanGoesOn() {
        var h = Harness(.answer, autoAdvertise: false)
        h.gapName = "Kiosk in the hall"
        h.acceptName = { _ in false }
        h.ask("Anyone?")
        h.advertise(name: "Kiosk in", nameType: 8)
        h.report(eventType: 0x1B, address: 1, rssi: 0xCE, data: [9, 8] + Array("Kiosk in".utf8))
        h.pump()
        #expect(h.nameRead == "Kiosk in the hall")
        #expect(!h.reported.contains { if case .ready = $0 { true } else { false } })
        #expect(!h.requests.contains { $0[0] == 0x12 })  // no question written to it
        #expect(h.session.phaseIsScanning && !h.linkUp)
    }

    @Test func completeNameIsNotReadAgain() {
        var h = Harness(.answer)
        h.ask("Known?")
        #expect(h.nameRead == nil && !h.requests.contains { $0[0] == 0x0A })
        #expect(h.reported.contains { if case .answered = $0 { true } else { false } })
    }

    @Test func shortenedNameWithAScanResponseWithoutTheNameIsJudgedOnWhatItHas() {
        // A scan response that does not carry the name: the short name is all there is.
        var h = Harness(.answer, autoAdvertise: false)
        h.ask("Short?")
        h.advertise(name: "Kiosk in", nameType: 8)
        h.pump()
        #expect(!h.reported.contains { if case .found = $0 { true } else { false } })
        h.report(eventType: 0x1B, address: 1, rssi: 0xCE, data: [])
        h.pump()
        #expect(h.reported.contains { if case .found = $0 { true } else { false } })
    }

    @Test func deviceWalkingIntoTheWindowIsFound() {
        // First heard at -62 dBm (outside -60…-20), then closer: the central judges
        // every report, so the 8-Ball is found at the first sample inside the window.
        var h = Harness(.answer, autoAdvertise: false)
        let found = Self.found(&h, after: [-62, -75, -61, -58, -40])
        #expect(found.count == 1)
        #expect(found.first?.rssi == -58)
        #expect(h.reported.contains { if case .answered = $0 { true } else { false } })
        #expect(!h.reported.contains { if case .notFound = $0 { true } else { false } })
    }

    @Test func deviceThatStaysOutsideTheWindowIsNotFound() {
        for sequence: [Int8] in [[-62, -61, -90, -61], [-19, -10, -5], [-127, -100]] {
            var h = Harness(.answer, autoAdvertise: false)
            let found = Self.found(&h, after: sequence)
            #expect(found.isEmpty)
            h.pump(now: 5_000)
            #expect(h.reported.contains { if case .notFound = $0 { true } else { false } })
        }
    }

    @Test func tooCloseThenInsideTheWindowIsFound() {
        var settings = CentralSettings()
        settings.rssiMin = -70
        settings.rssiMax = -40
        var h = Harness(.answer, settings: settings, autoAdvertise: false)
        let found = Self.found(&h, after: [-30, -35, -45])
        #expect(found.map(\.rssi) == [-45])
    }

    @Test func anotherAdvertiserInTheWindowWinsWhileTheFirstIsFar() {
        var h = Harness(.answer, autoAdvertise: false)
        h.ask("Which?")
        h.advertise(rssi: UInt8(bitPattern: -80), name: "Far", address: 1)
        h.pump()
        h.advertise(rssi: UInt8(bitPattern: -45), name: "Near", address: 2)
        h.pump()
        let found = h.reported.compactMap { if case .found(let entry) = $0 { entry } else { nil } }
        #expect(found.map { $0.summary.name.bytes } == [Array("Near".utf8)])
    }

    @Test func finishDisconnects() {
        var h = Harness(.answer)
        h.ask("One?")
        h.session.finish(host: &h.c.host)
        h.pump()
        #expect(h.reported.last.map { if case .finished = $0 { true } else { false } } == true)
        let finished = h.session.isFinished
        #expect(finished)
    }

    @Test func filterRequiresUUIDNameAndRSSI() {
        var settings = CentralSettings()
        settings.peerName = Array("B8".utf8).withRaw { FixedBytes($0) }
        let session = EightBallCentral(settings: settings)
        var entry = ScanEntry()
        entry.connectable = true
        entry.rssi = -50
        let m1 = session.matches(entry)
        #expect(!m1)
        entry.summary.addService(EightBallUUID.service)
        let m2 = session.matches(entry)
        #expect(!m2)  // no name
        Array("B8".utf8).withRaw { _ = entry.summary.name.append($0) }
        let shortened = session.matches(entry)
        #expect(!shortened)  // a shortened name: judged once the scan response is heard
        entry.summary.nameIsComplete = true
        let m3 = session.matches(entry)
        #expect(m3)
        entry.rssi = -61
        let m4 = session.matches(entry)
        #expect(!m4)
        entry.rssi = -50
        entry.connectable = false
        let m5 = session.matches(entry)
        #expect(!m5)
    }

    /// --scan in a crowded hall: every distinct 8-Ball is listed once, past
    /// what the list remembers too; when it is full the oldest is forgotten
    /// (said once, `.listFull`) and listed again if heard again.
    @Test func scanListsEveryEightBallInACrowdedHall() {
        var settings = CentralSettings()
        settings.listOnly = true
        var h = Harness(.answer, settings: settings, autoAdvertise: false)
        let remembered = Capacity.ReportedEightBalls<UInt8>.count
        func listed() -> [UInt8] {
            // The scripted reports vary the address's least significant byte.
            h.reported.compactMap { if case .found(let entry) = $0 { UInt8(truncatingIfNeeded: entry.address.value) } else { nil } }
        }
        let crowd = UInt8(remembered + 20)
        for address in 1...crowd {
            for _ in 0..<2 {  // heard twice in a row: listed once
                h.advertise(address: address)
                h.pump()
            }
        }
        #expect(listed() == Array(1...crowd))
        #expect(h.session.listedCount == Int(crowd))
        let full = h.reported.compactMap { if case .listFull(let count) = $0 { count } else { nil } }
        #expect(full == [remembered])
        // The first 20 were forgotten to make room: heard again, listed again.
        h.advertise(address: 1)
        h.pump()
        h.advertise(address: crowd)
        h.pump()
        #expect(listed().suffix(2) == [crowd, 1])
    }

    /// Reports faster than the platform drains the session's events: none is
    /// lost, the 8-Ball whose report found no room is listed when heard next.
    @Test func scanListsWhatABurstOverflowed() {
        var settings = CentralSettings()
        settings.listOnly = true
        var h = Harness(.answer, settings: settings, autoAdvertise: false)
        for address in UInt8(1)...30 { h.advertise(address: address) }
        h.pump()
        for address in UInt8(1)...30 { h.advertise(address: address) }
        h.pump()
        let listed = h.reported.compactMap { if case .found(let entry) = $0 { UInt8(truncatingIfNeeded: entry.address.value) } else { nil } }
        #expect(listed.sorted() == Array(1...30))
    }
}

// MARK: - --timeout bounds the whole question

extension CentralSessionTests {
    static func reported(_ h: borrowing Harness, _ wanted: (CentralEvent) -> Bool) -> Bool { h.reported.contains(where: wanted) }
    static func offline(_ event: CentralEvent) -> Bool { if case .offline = event { true } else { false } }
    static func answered(_ event: CentralEvent) -> Bool { if case .answered = event { true } else { false } }

    /// Asks at 100 ms with a 3 s question timeout against an 8-Ball that freezes
    /// at the request `freezeAt` picks: nothing is said before 3,100 ms, "device
    /// offline" at 3,100 ms (not at the ATT transaction timeout, 30 s later), the
    /// link is closed and the next question can be asked.
    static func frozen(at freezeAt: @escaping ([UInt8]) -> Bool, unreachable: Bool = false) -> Harness {
        var settings = CentralSettings()
        settings.questionTimeout = 3_000
        var h = Harness(.answer, settings: settings, freezeAt: freezeAt, unreachable: unreachable)
        h.ask("Are you there?", now: 100)
        do { let ok = h.session.nextDeadline() == 3_100; #expect(ok) }  // the driver wakes up for it
        h.pump(now: 3_099)
        do { let ok = !reported(h, offline); #expect(ok) }
        h.pump(now: 3_100)
        do { let ok = reported(h, offline); #expect(ok) }
        do { let ok = !h.linkUp; #expect(ok) }
        let idle = h.session.isIdleForQuestion
        #expect(idle)
        return h
    }

    @Test func aPeripheralFrozenAtTheMTUExchangeIsOfflineAtTheQuestionsTimeout() {
        let h = Self.frozen(at: { $0[0] == 0x02 })
        do { let ok = h.requests.map { $0[0] } == [0x02]; #expect(ok) }
        do { let ok = h.c.sent.contains { ScriptedController<NoGATTDelegate>.opcode($0) == HCIOpcode.disconnect }; #expect(ok) }
    }

    @Test func aPeripheralFrozenAtDiscoveryIsOfflineAtTheQuestionsTimeout() {
        let h = Self.frozen(at: { $0[0] == 0x06 })
        do { let ok = h.requests.map { $0[0] } == [0x02, 0x06]; #expect(ok) }
    }

    @Test func aPeripheralFrozenAtTheQuestionIsOfflineAtTheQuestionsTimeout() {
        // Subscribed; the question's Write Request goes unanswered.
        let h = Self.frozen(at: { $0[0] == 0x12 && $0[1] == 0x0C })
        do { let ok = h.requests.last?.starts(with: [0x12, 0x0C]) == true; #expect(ok) }
    }

    @Test func aPeripheralThatAcceptsTheQuestionAndNeverAnswersIsOfflineAtTheQuestionsTimeout() {
        var settings = CentralSettings()
        settings.questionTimeout = 3_000
        var h = Harness(.silent, settings: settings)
        h.ask("Anyone?", now: 100)
        h.pump(now: 3_099)
        do { let ok = !Self.reported(h, Self.offline); #expect(ok) }
        h.pump(now: 3_100)
        do { let ok = Self.reported(h, Self.offline); #expect(ok) }
    }

    @Test func aConnectionThatNeverCompletesIsOfflineAtTheQuestionsTimeout() {
        var h = Self.frozen(at: { _ in false }, unreachable: true)
        do { let ok = h.requests.isEmpty; #expect(ok) }
        // The next question starts afresh and is answered by an 8-Ball that connects.
        h.unreachable = false
        h.ask("Now?", now: 3_200)
        do { let ok = Self.reported(h, Self.answered); #expect(ok) }
    }

    @Test func theNextQuestionAfterATimeoutIsAskedOnAFreshLink() {
        var h = Self.frozen(at: { $0[0] == 0x06 })
        h.frozen = false
        h.freezeAt = { _ in false }
        h.ask("And now?", now: 4_000)
        do { let ok = Self.reported(h, Self.answered); #expect(ok) }
    }

    @Test func anAnswerInBeforeTheTimeoutStandsWhenTheUnsubscribeIsNotAnswered() {
        var settings = CentralSettings()
        settings.questionTimeout = 3_000
        var h = Harness(.answer, settings: settings)
        h.freezeAt = { $0 == hex("12 0f 00 00 00") }
        h.ask("Quick?", now: 100)
        h.pump(now: 3_100)
        do { let ok = Self.reported(h, Self.answered) && !Self.reported(h, Self.offline); #expect(ok) }
    }

    @Test func theQuestionsTimeCountsFromTheControllerBeingReady() {
        // Asked before the controller is up: its clock starts at .ready.
        var settings = CentralSettings()
        settings.questionTimeout = 3_000
        var h = Harness(.answer, settings: settings)
        h.freezeAt = { $0[0] == 0x02 }
        var fresh = EightBallCentral(settings: settings)
        _ = Array("Early?".utf8).withRaw { fresh.ask($0, host: &h.c.host, now: 50) }
        #expect(fresh.questionDue == 3_050)
        var notReady = ScriptedController(delegate: NoGATTDelegate(), role: .central, database: GATTDatabase(), maxConnections: 1)
        var early = EightBallCentral(settings: settings)
        early.start(host: &notReady.host, now: 0)
        _ = Array("Early?".utf8).withRaw { early.ask($0, host: &notReady.host, now: 50) }
        #expect(early.questionDue == nil)
        early.handle(.ready, host: &notReady.host, now: 400)
        #expect(early.questionDue == 3_400)
    }

    // MARK: - --peer NAME settles before it picks

    /// A scan that settles 1 s, with its 8-Ball heard at 200 ms: not connected to yet.
    static func settling() -> Harness {
        var settings = CentralSettings()
        settings.settleTime = 1_000
        var h = Harness(.answer, settings: settings, autoAdvertise: false)
        h.ask("Which?", now: 0)
        h.advertise()
        h.pump(now: 200)
        do { let ok = !h.reported.contains { if case .found = $0 { true } else { false } } && !h.linkUp; #expect(ok) }
        return h
    }

    @Test func aMatchIsConnectedToOnlyOnceTheScanHasSettled() {
        var h = Self.settling()
        do { let ok = h.session.isSettling && h.session.nextDeadline() == 1_000; #expect(ok) }
        h.pump(now: 1_000)
        do { let ok = h.reported.contains { if case .found = $0 { true } else { false } }; #expect(ok) }
        do { let ok = Self.reported(h, Self.answered); #expect(ok) }
    }

    @Test func aDroppedTargetIsNotConnectedTo() {
        var h = Self.settling()
        h.session.dropTarget()
        h.session.settings.peerAddress = UInt64.max  // as the platform does: nobody matches
        h.advertise()
        h.pump(now: 1_000)
        do { let ok = !h.reported.contains { if case .found = $0 { true } else { false } } && !h.linkUp; #expect(ok) }
        let settling = h.session.isSettling
        #expect(!settling)
    }

    @Test func scanWithoutAWindowListsEverySignal() {
        var settings = CentralSettings()
        settings.listOnly = true
        settings.rssiWindow = false
        var h = Harness(.answer, settings: settings, autoAdvertise: false)
        for (address, rssi) in [(UInt8(1), Int8(-90)), (2, -10), (3, -50)] {
            h.advertise(rssi: UInt8(bitPattern: rssi), address: address)
            h.pump()
        }
        let listed = h.reported.compactMap { if case .found(let entry) = $0 { entry.rssi } else { nil } }
        #expect(listed == [-90, -10, -50])
    }
}

// MARK: - A link nobody asked for

extension CentralSessionTests {
    /// A controller that completes an LE Create Connection this session never
    /// sent (a previous host's, left pending: Bumble's HCI Reset and Create
    /// Connection Cancel leave it armed, and it completes when its 8-Ball
    /// advertises next) while --scan lists: the link is closed, not adopted.
    /// Adopted, the scan's deadline was dropped for a discovery nobody needs,
    /// and `--scan --timeout 2` listed one 8-Ball and never ended.
    @Test func scanClosesALinkItNeverAskedForAndEndsOnTime() {
        var settings = CentralSettings()
        settings.listOnly = true
        settings.scanTimeout = 2_000
        var h = Harness(.answer, settings: settings, autoAdvertise: false)
        h.advertise(address: 2)
        h.pump(now: 100)
        h.linkUp = true
        h.c.connect(handle: 0x40, asCentral: true)  // to the 8-Ball at address 1
        h.pump(now: 200)
        do { let ok = !h.linkUp && !h.reported.contains { if case .connected = $0 { true } else { false } }; #expect(ok) }
        do { let ok = h.session.nextDeadline() == 2_000; #expect(ok) }
        h.advertise(address: 1)  // advertising again once its link closed: listed too
        h.pump(now: 300)
        h.pump(now: 2_000)
        let listed = h.reported.compactMap { if case .found(let entry) = $0 { UInt8(truncatingIfNeeded: entry.address.value) } else { nil } }
        #expect(listed == [2, 1])
        do { let ok = h.reported.contains { if case .scanComplete = $0 { true } else { false } }; #expect(ok) }
        let finished = h.session.isFinished
        #expect(finished)
    }

    /// The same stray link while asking an 8-Ball named by --peer ADDRESS: a
    /// link to another 8-Ball is closed, and the one asked is the one named.
    @Test func askerClosesALinkToAnotherEightBallItNeverAskedFor() {
        var settings = CentralSettings()
        settings.peerAddress = 0xC6_05_04_03_02_07  // C6:05:04:03:02:07, not the one the link goes to
        var h = Harness(.answer, settings: settings, autoAdvertise: false)
        _ = Array("Who?".utf8).withRaw { h.session.ask($0, host: &h.c.host, now: 0) }
        h.pump(now: 0)
        h.linkUp = true
        h.c.connect(handle: 0x40, asCentral: true)  // to the 8-Ball at address 1
        h.pump(now: 100)
        do { let ok = !h.linkUp && !h.reported.contains { if case .connected = $0 { true } else { false } }; #expect(ok) }
        let scanning = h.session.phaseIsScanning
        #expect(scanning)
    }
}

extension EightBallCentral {
    var phaseIsScanning: Bool { phase == .scanning }
}
