import CLinux
import BLEHost

/// Log levels of --log-level, most to least severe.
enum LogLevel: Int, Comparable, CaseIterable {
    case error, warning, info, debug, trace

    init?(name: String) {
        switch name.foldedCase() {
        case "error": self = .error
        case "warning", "warn": self = .warning
        case "info": self = .info
        case "debug": self = .debug
        case "trace": self = .trace
        default: return nil
        }
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
