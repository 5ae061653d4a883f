import CLinux
import BLEHost

/// Monotonic milliseconds: the only clock the core ever sees.
func monotonicMilliseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec / 1_000_000)
}
