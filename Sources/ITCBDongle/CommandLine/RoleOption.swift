import BLEHost
import Chipsets
import EightBall
import CLinux

enum RoleOption: String {
    case peripheral, central
}
