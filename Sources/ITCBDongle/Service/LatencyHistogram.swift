/// A Prometheus histogram of latencies (--metrics-file): kept in microseconds,
/// written in seconds, with fixed buckets from 1 ms to 1 s (a question's
/// answer is queued within a millisecond and goes over the air within a
/// connection interval or two, 7.5 ms to 1 s). Plain counts in place:
/// observing one costs no allocation.
struct LatencyHistogram {
    static let bucketCount = 10
    /// Upper bounds, microseconds; a last bucket (+Inf) takes the rest.
    static let bounds: InlineArray<10, Int> = [1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
                                               1_000_000]
    /// The same bounds as the text format's `le` values, seconds, and +Inf (space-separated).
    static let boundText: StaticString = "0.001 0.0025 0.005 0.01 0.025 0.05 0.1 0.25 0.5 1 +Inf"
    /// Observations per bucket (not cumulative; the text is), the last one +Inf only.
    var buckets = InlineArray<11, Int>(repeating: 0)
    var sum = 0
    var count = 0

    mutating func observe(microseconds: Int) {
        let value = max(microseconds, 0)
        var index = 0
        while index < LatencyHistogram.bucketCount, value > LatencyHistogram.bounds[index] { index += 1 }
        buckets[index] += 1
        sum += value
        count += 1
    }

    /// Ints only, as MetricCounts: added word by word (`addInts`).
    mutating func add(_ other: LatencyHistogram) { addCounts(&self, other) }
}
