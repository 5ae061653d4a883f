import BLEHost
import Chipsets
import EightBall
import CLinux

enum RoleOption: String, CaseIterable {
    case peripheral, central
}
