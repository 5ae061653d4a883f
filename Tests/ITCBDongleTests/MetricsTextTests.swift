import Testing
import BLEHost
@testable import ITCBDongle

/// --metrics-file's text: the latency histogram's buckets and how the file
/// renders it, the info series and `up` (the Python suite checks the file a
/// running instance writes with node_exporter and promtool).
@Suite struct MetricsTextTests {
    @Test func aLatencyGoesIntoTheFirstBucketThatHoldsIt() {
        var h = LatencyHistogram()
        for micros in [0, 1_000, 1_001, 7_500, 1_000_000, 1_000_001, -5] { h.observe(microseconds: micros) }
        // le 0.001: 0, 1000 and the negative one (a clock step) as 0; 0.0025: 1001; 0.01: 7500; 1: 1 s; +Inf: past it.
        #expect(h.buckets[0] == 3 && h.buckets[1] == 1 && h.buckets[3] == 1 && h.buckets[9] == 1 && h.buckets[10] == 1)
        #expect(h.count == 7 && h.sum == 1_000 + 1_001 + 7_500 + 1_000_000 + 1_000_001)
        var total = LatencyHistogram()
        total.add(h)
        total.add(h)
        #expect(total.count == 14 && total.buckets[0] == 6 && total.sum == 2 * h.sum)
    }

    func text(_ file: MetricsFile, _ counts: MetricCounts, _ gauges: MetricGauges) -> [String] {
        file.render(counts, gauges)
        return String(decoding: file.buffer, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test func thePeripheralsFileHasItsInfoGaugesAndCumulativeBuckets() {
        let file = MetricsFile(path: "/nonexistent/x.prom", transport: "usb:1-1.2", name: "Lobby \"A\"", role: .peripheral)
        var counts = MetricCounts()
        counts.answered = 3
        for micros in [500, 20_000, 30_000] { counts.answerSent.observe(microseconds: micros) }
        var gauges = MetricGauges()
        gauges.connected = 2
        gauges.advertising = true
        let lines = text(file, counts, gauges)
        #expect(lines.contains("itcb_dongle_up{transport=\"usb:1-1.2\"} 1"))
        #expect(lines.contains("itcb_dongle_advertising{transport=\"usb:1-1.2\"} 1"))
        #expect(lines.contains("itcb_dongle_controller_answering{transport=\"usb:1-1.2\"} 0"))
        #expect(lines.contains("itcb_dongle_centrals_connected{transport=\"usb:1-1.2\"} 2"))
        #expect(lines.contains("itcb_dongle_info{transport=\"usb:1-1.2\",name=\"Lobby \\\"A\\\"\",version=\"\(itcbDongleVersion)\",role=\"peripheral\",chipset=\"\",firmware=\"\",address=\"\"} 1"))
        let sent = "itcb_dongle_answer_latency_seconds_bucket{transport=\"usb:1-1.2\",stage=\"sent\","
        #expect(lines.contains(sent + "le=\"0.001\"} 1"))
        #expect(lines.contains(sent + "le=\"0.01\"} 1"))
        #expect(lines.contains(sent + "le=\"0.025\"} 2"))
        #expect(lines.contains(sent + "le=\"0.05\"} 3"))
        #expect(lines.contains(sent + "le=\"+Inf\"} 3"))
        #expect(lines.contains("itcb_dongle_answer_latency_seconds_sum{transport=\"usb:1-1.2\",stage=\"sent\"} 0.050500"))
        #expect(lines.contains("itcb_dongle_answer_latency_seconds_count{transport=\"usb:1-1.2\",stage=\"queued\"} 0"))
        #expect(!lines.contains { $0.hasPrefix("itcb_dongle_central_") }, "the central's families are the central's")
    }

    @Test func theCentralsFileCountsItsQuestionsAndAStopSaysUpZero() {
        let file = MetricsFile(path: "/nonexistent/x.prom", transport: "tcp:127.0.0.1:1", name: "", role: .central)
        var counts = MetricCounts()
        counts.central.asked = 4
        counts.central.answered = 2
        counts.central.timedOut = 1
        counts.central.notFound = 1
        var gauges = MetricGauges()
        gauges.up = false
        let lines = text(file, counts, gauges)
        #expect(lines.contains("itcb_dongle_up{transport=\"tcp:127.0.0.1:1\"} 0"))
        #expect(lines.contains("itcb_dongle_central_questions_asked_total{transport=\"tcp:127.0.0.1:1\"} 4"))
        #expect(lines.contains("itcb_dongle_central_questions_answered_total{transport=\"tcp:127.0.0.1:1\"} 2"))
        #expect(lines.contains("itcb_dongle_central_questions_timed_out_total{transport=\"tcp:127.0.0.1:1\"} 1"))
        #expect(lines.contains("itcb_dongle_central_not_found_total{transport=\"tcp:127.0.0.1:1\"} 1"))
        #expect(!lines.contains { $0.hasPrefix("itcb_dongle_questions_answered_total") || $0.hasPrefix("itcb_dongle_advertising") })
    }

    /// `addCounts` adds the count structures word by word, which holds only while
    /// every field, down to the histograms' buckets, is an Int (or an InlineArray
    /// of Ints): a Bool or UInt8 among them would be padded to a word and added as
    /// garbage. Walks the fields as Mirror shows them.
    @Test func theCountStructuresHoldOnlyIntCounts() {
        func nonInts(_ value: Any, _ path: String) -> [String] {
            let type = String(describing: Swift.type(of: value))
            if type.hasPrefix("InlineArray<"), type.hasSuffix(", Int>") { return [] }  // Mirror cannot see its elements
            let children = Mirror(reflecting: value).children
            if children.isEmpty { return value is Int ? [] : ["\(path): \(type)"] }
            return children.enumerated().flatMap { nonInts($1.value, path + "." + ($1.label ?? "\($0)")) }
        }
        #expect(nonInts(MetricCounts(), "MetricCounts") == [])
        #expect(nonInts(CentralCounts(), "CentralCounts") == [])
        // The walk can fail: a Bool among Ints is found.
        struct WithAFlag { var count = 0; var flag = false }
        #expect(nonInts(WithAFlag(), "WithAFlag") == ["WithAFlag.flag: Bool"])
        // And the words add up.
        var total = MetricCounts()
        var one = MetricCounts()
        one.answered = 2
        one.recoveries[3] = 1
        one.answerSent.observe(microseconds: 1_500)
        one.central.asked = 5
        addCounts(&total, one)
        addCounts(&total, one)
        #expect(total.answered == 4 && total.recoveries[3] == 2 && total.answerSent.count == 2 && total.central.asked == 10)
    }
}
