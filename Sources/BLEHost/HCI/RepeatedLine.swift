/// A line a peer can cause over and over (a refused SMP packet, a dropped
/// request): the first is written, then at most one per
/// `Host.repeatLineInterval` with the count of those in between, and the rest
/// at the disconnection, so a hostile peer cannot fill the journal.
struct RepeatedLine {
    var unreported = 0
    var lastLine: UInt64? = nil

    /// One more occurrence at `now`: the count of unreported ones before it
    /// when a line is due, nil when it is held back.
    mutating func note(now: UInt64) -> Int? {
        if let last = lastLine, now < last + Host.repeatLineInterval {
            unreported += 1
            return nil
        }
        lastLine = now
        defer { unreported = 0 }
        return unreported
    }

    /// What is held back, as the `unreported` of one last line (nil: nothing).
    var remainder: Int? { unreported > 0 ? unreported - 1 : nil }
}
