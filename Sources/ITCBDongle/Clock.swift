import CLinux
import BLEHost

/// Monotonic milliseconds: the only clock the core ever sees.
func monotonicMilliseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec / 1_000_000)
}

/// Monotonic microseconds: the platform's own timing of answers (--metrics-file's
/// latency histograms), finer than the core's clock; read only when a question
/// is accepted, answered and sent.
func monotonicMicroseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec / 1000)
}
