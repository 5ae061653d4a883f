import BLEHost
import Chipsets
import EightBall
import CLinux

enum RoleOption: String, CaseIterable {
    case peripheral, central

    /// The rawValue for messages (BuiltText appends it as it is).
    var name: StaticString { self == .peripheral ? "peripheral" : "central" }
}
