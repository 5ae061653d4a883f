import CLinux
import Chipsets

/// The messages are BuiltText: each `throw .lost("\(what): …")` is built by
/// BuiltText's outlined appends, not by String interpolation inlined at the throw.
enum TransportError: Error, CustomStringConvertible {
    case unavailable(BuiltText)
    case lost(BuiltText)
    case unplugged(BuiltText)
    /// No matching device is plugged in (USB): may appear later.
    case notFound(BuiltText)

    var description: String {
        switch self {
        case .unavailable(let message), .lost(let message), .unplugged(let message), .notFound(let message): message.string
        }
    }
}
