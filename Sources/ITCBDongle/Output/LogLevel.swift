import CLinux
import BLEHost

/// Log levels of --log-level, most to least severe.
enum LogLevel: Int, Comparable, CaseIterable {
    case error, warning, info, debug, trace

    /// The level a --log-level name gives, in any ASCII case ("warn" is
    /// warning's), read over its bytes: one table, the cases' names in their
    /// order, each NUL-ended, then "warn".
    init?(name text: UnsafeBufferPointer<UInt8>) {
        let names: StaticString = "error\0warning\0info\0debug\0trace\0warn\0"
        let table = UnsafeBufferPointer(start: names.utf8Start, count: names.utf8CodeUnitCount)
        var index = 0, start = 0
        while start < table.count {
            var end = start
            while table[end] != 0 { end += 1 }
            var same = end - start == text.count
            var offset = 0
            while same, offset < text.count {
                let byte = text[offset]
                same = (byte >= 65 && byte <= 90 ? byte + 32 : byte) == table[start + offset]
                offset += 1
            }
            if same {
                self.init(rawValue: index == 5 ? LogLevel.warning.rawValue : index)
                return
            }
            index += 1
            start = end + 1
        }
        return nil
    }

    /// The same, for a String (the unit tests').
    init?(name: String) {
        guard let level = name.withBytes({ LogLevel(name: $0.assumingMemoryBound(to: UInt8.self)) }) else { return nil }
        self = level
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
