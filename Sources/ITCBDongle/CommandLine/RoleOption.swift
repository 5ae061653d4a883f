import BLEHost
import Chipsets
import EightBall
import CLinux

enum RoleOption: String, CaseIterable {
    case peripheral, central

    /// The rawValue for messages (BuiltText appends it as it is).
    var name: StaticString { self == .peripheral ? "peripheral" : "central" }

    /// The role an argument names, by its bytes.
    init?(_ text: ArgText) {
        if text.isBytes("peripheral") {
            self = .peripheral
        } else if text.isBytes("central") {
            self = .central
        } else {
            return nil
        }
    }
}
