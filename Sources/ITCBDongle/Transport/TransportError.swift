import CLinux
import Chipsets

enum TransportError: Error, CustomStringConvertible {
    case unavailable(String)
    case lost(String)
    case unplugged(String)
    /// No matching device is plugged in (USB): may appear later.
    case notFound(String)

    var description: String {
        switch self {
        case .unavailable(let message), .lost(let message), .unplugged(let message), .notFound(let message): message
        }
    }
}
