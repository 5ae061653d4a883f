import CLinux
import Chipsets

/// The poll(2) set of a transport that waits in poll: its own descriptors,
/// then the run loop's two (the extra one, the signal pipe). Made again only
/// when the transport's descriptors change (libusb's), so a wait allocates
/// nothing; the owner frees it (`free`).
struct PollSet {
    var fds = UnsafeMutableBufferPointer<pollfd>(start: nil, count: 0)
    /// How many of `fds` are the transport's.
    var own = 0

    var isEmpty: Bool { fds.isEmpty }

    mutating func set(_ descriptors: [pollfd]) {
        free()
        fds = .allocate(capacity: descriptors.count + 2)
        own = descriptors.count
        for i in 0..<own { fds[i] = descriptors[i] }
        fds[own] = pollfd(fd: -1, events: Int16(POLLIN), revents: 0)
        fds[own + 1] = pollfd(fd: -1, events: Int16(POLLIN), revents: 0)
    }

    func free() { fds.deallocate() }

    /// Sleeps in poll until a descriptor is readable or `deadline` passes;
    /// returns the clock at the wake-up and whether one of the transport's own is ready.
    func wait(until deadline: UInt64, now: UInt64, signals: Int32, extra: Int32) throws(TransportError) -> (now: UInt64, ready: Bool) {
        fds[own].fd = extra
        fds[own + 1].fd = signals
        let n = poll(fds.baseAddress, nfds_t(fds.count), sleepMilliseconds(until: deadline, now: now))
        if n < 0, errno != EINTR { throw .lost("poll failed: \(errnoText)") }
        let woke = monotonicMilliseconds()
        guard n > 0 else { return (woke, false) }
        for i in 0..<own where fds[i].revents != 0 { return (woke, true) }
        return (woke, false)
    }
}
