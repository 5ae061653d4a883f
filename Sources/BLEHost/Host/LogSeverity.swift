/// How much a host event matters to whoever reads the log.
public enum LogSeverity: Int, Comparable {
    case error, warning, info, debug, trace

    public static func < (a: LogSeverity, b: LogSeverity) -> Bool { a.rawValue < b.rawValue }
}
