import CLinux
import BLEHost

/// Log levels of --log-level, most to least severe.
enum LogLevel: Int, Comparable, CaseIterable {
    case error, warning, info, debug, trace

    /// The level a --log-level name gives, in any ASCII case ("warn" is warning's).
    init?(name: String) {
        if sameBytesIgnoringASCIICase(name, "warn") {
            self = .warning
            return
        }
        guard let level = LogLevel.allCases.first(where: { sameBytesIgnoringASCIICase(name, $0.name) }) else { return nil }
        self = level
    }

    var name: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .info: "info"
        case .debug: "debug"
        case .trace: "trace"
        }
    }

    /// The syslog priority a line of this level has in the journal, written
    /// before it as sd-daemon(3) reads it: `<3>` error, `<4>` warning, `<6>`
    /// info, `<7>` debug and trace.
    var priority: Int {
        switch self {
        case .error: 3
        case .warning: 4
        case .info: 6
        case .debug, .trace: 7
        }
    }

    static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}
