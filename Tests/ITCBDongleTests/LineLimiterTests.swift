import Glibc
import Testing
import BLEHost
@testable import ITCBDongle

/// Lines a peer or a noisy line can repeat (LineLimiter.swift): the first of a
/// burst at once, one line per kind per second per link at most, the held
/// ones summed up when the burst ends or every 10 s while it lasts.
@Suite struct LineLimiterTests {
    /// What a limiter lets through: the lines (time, text) and the summaries.
    struct Run {
        var limiter = LineLimiter()
        var lines: [(UInt64, String)] = []
        var occurrences = 0

        /// One occurrence at `now` (the due summaries first, as the run loop does at its wake-up).
        mutating func occur(_ kind: RepeatKind, key: UInt16 = 0, at now: UInt64) {
            occurrences += 1
            flush(at: now)
            var said: [(UInt64, String)] = []
            if limiter.admit(kind, key: key, level: .warning, now: now, summary: { said.append((now, $1.string)) }) {
                said.append((now, "\(kind.label) (line)"))
            }
            lines += said
        }

        mutating func flush(at now: UInt64, everything: Bool = false) {
            var said: [(UInt64, String)] = []
            limiter.flush(now: now, everything: everything) { said.append((now, $1.string)) }
            lines += said
        }

        /// The occurrences the lines account for: one per line, plus each summary's count.
        var accounted: Int {
            lines.reduce(0) { total, line in
                guard let more = line.1.split(separator: ":").last?.split(separator: " ").first, let n = Int(more) else {
                    return total + 1
                }
                return total + n
            }
        }
    }

    @Test func theFirstLineIsWrittenAndOneOutsideABurstToo() {
        var run = Run()
        run.occur(.controllerReady, at: 1_000)
        run.occur(.controllerReady, at: 5_000)  // a recovery 4 s later: its own line
        run.occur(.advertising, at: 5_001)  // another kind: not held
        #expect(run.lines.map(\.1) == ["controller ready (line)", "controller ready (line)", "advertising (line)"])
        #expect(run.limiter.deadline == UInt64.max, "nothing held: no wake-up")
    }

    /// The recovery's second step for a chip with its own reset is two lines within
    /// the second (the chip's reset, then the USB port reset after it): both are said.
    @Test func theChipResetAndThePortResetAfterItAreBothSaid() {
        var run = Run()
        run.occur(.recoveryStep, at: 1_000)
        run.occur(.chipPortReset, at: 1_400)
        #expect(run.lines.map(\.1) == ["controller reset, recovery step 2 (line)",
                                        "USB port reset after the chip's own reset, recovery step 2 (line)"])
    }

    @Test func aBurstIsOneLineThenOneSummaryWithItsCount() {
        var run = Run()
        for t in stride(from: UInt64(10_000), to: 13_000, by: 100) { run.occur(.framingLoss, at: t) }  // 30 in 3 s
        #expect(run.lines.count == 1)
        #expect(run.limiter.deadline == 12_900 + LineLimiter.gap, "summed up after a second of quiet")
        run.flush(at: 13_500)
        #expect(run.lines.count == 1, "not due yet")
        run.flush(at: 13_900)
        #expect(run.lines.count == 2)
        #expect(run.lines[1].1 == "H4 stream out of sync, controller reset: 29 more in the last 4 s (at most one line a second)")
        #expect(run.limiter.deadline == UInt64.max)
        // Quiet since: the next one is a line of its own at once.
        run.occur(.framingLoss, at: 20_000)
        #expect(run.lines.count == 3 && run.lines[2] == (20_000, "H4 stream out of sync, controller reset (line)"))
        #expect(run.accounted == run.occurrences)
    }

    @Test func twentySecondsOfNoiseOnThreeKindsStayUnderTwoLinesASecondAndCountEveryOne() {
        // A recovery every 50 ms, as 59 lines a second did: out of sync, controller ready, advertising.
        var run = Run()
        let start: UInt64 = 100_000
        var t = start
        while t < start + 20_000 {
            run.occur(.framingLoss, at: t)
            run.occur(.controllerReady, at: t + 8)
            run.occur(.advertising, at: t + 9)
            t += 50
        }
        // The run loop wakes for the summaries until none is held.
        while run.limiter.deadline != UInt64.max { run.flush(at: run.limiter.deadline) }
        let span = Double(run.lines.last!.0 - start) / 1000
        #expect(Double(run.lines.count) / span <= 2, "\(run.lines.count) lines in \(span) s")
        #expect(run.accounted == run.occurrences && run.occurrences == 1_200)
        // Per kind: never two lines within a second.
        for kind in [RepeatKind.framingLoss, .controllerReady, .advertising] {
            let times = run.lines.filter { $0.1.hasPrefix("\(kind.label)") }.map(\.0)
            #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 >= LineLimiter.gap }, "\(kind): \(times)")
            #expect(times.count >= 3, "a summary every 10 s while it lasts, and one at its end")
        }
        #expect(run.lines.contains { $0.1.contains("more in the last 10 s") })
    }

    @Test func linksAndConnectionsAreHeldApart() {
        var run = Run()
        run.occur(.parametersRefused, key: 0x40, at: 0)
        run.occur(.parametersRefused, key: 0x41, at: 10)
        run.occur(.parametersRefused, key: 0x40, at: 20)
        #expect(run.lines.count == 2)
        #expect(run.limiter.deadline == 20 + LineLimiter.gap)
        run.flush(at: run.limiter.deadline)
        #expect(run.lines.last!.1 == "connection parameters refused (connection 0x40): 1 more in the last 2 s (at most one line a second)")
        #expect(run.lines.count == 3 && run.limiter.deadline == UInt64.max)
    }

    @Test func aFullTableSumsUpTheOneQuietTheLongestBeforeReusingIt() {
        var run = Run()
        run.occur(.usbStall, key: 0x81, at: 0)
        run.occur(.usbStall, key: 0x81, at: 10)  // held
        for key in 1..<UInt16(LineLimiter.slots) { run.occur(.commandFailed, key: key, at: 100 + UInt64(key)) }
        #expect(run.lines.count == LineLimiter.slots)
        run.occur(.commandFailed, key: 0x2005, at: 200)  // no slot left: the stall's is taken, its count said first
        #expect(run.lines.suffix(2).map(\.1) == [
            "USB endpoint stalled (endpoint 0x81): 1 more in the last 1 s (at most one line a second)",
            "HCI command failed (line)",
        ])
        #expect(run.accounted == run.occurrences)
    }

    @Test func theSessionsEndSaysWhatIsHeld() {
        var run = Run()
        run.occur(.linkDropped, key: 0x40, at: 0)
        run.occur(.linkDropped, key: 0x40, at: 1)
        run.occur(.linkDropped, key: 0x40, at: 2)
        run.flush(at: 3, everything: true)
        #expect(run.lines.last!.1.hasPrefix("link dropped for a controller reset (connection 0x40): 2 more"))
        #expect(run.limiter.deadline == UInt64.max)
    }

    @Test func eventsMapToTheirKindAndLink() {
        #expect(HostEvent.ready.repeatKind! == (.controllerReady, 0))
        #expect(HostEvent.advertising(enabled: true).repeatKind! == (.advertising, 0))
        #expect(HostEvent.connectionParametersRefused(connection: 0x41).repeatKind! == (.parametersRefused, 0x41))
        #expect(HostEvent.disconnected(connection: 0x42, reason: nil).repeatKind! == (.linkDropped, 0x42))
        // A central's own disconnection, a question's events: never held.
        #expect(HostEvent.disconnected(connection: 0x42, reason: 0x13).repeatKind == nil)
        #expect(HostEvent.mtuExchanged(connection: 0x40, mtu: 247).repeatKind == nil)
    }
}
