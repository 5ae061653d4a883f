import CLinux
import BLEHost

/// The controller stops advertising when a central connects and the host
/// resumes it at once while a slot is free: that pair, once per connection, is
/// debug. At info: the first "advertising" after bring-up, "advertising
/// stopped" when it stays stopped (every --max-centrals slot taken), and
/// "advertising" again when it resumes after that.
enum AdvertisingNews {
    nonisolated(unsafe) static var announced = false
    nonisolated(unsafe) static var saidStopped = false

    static func level(_ event: HostEvent) -> LogLevel {
        guard case .advertising(let enabled) = event, enabled, !announced || saidStopped else { return .debug }
        announced = true
        saidStopped = false
        return .info
    }

    static func connected(_ count: Int, _ limit: Int) {
        guard announced, count >= limit, !saidStopped else { return }
        saidStopped = true
        Log.info("advertising stopped: \(count) central(s) connected, every --max-centrals slot taken")
    }
}
