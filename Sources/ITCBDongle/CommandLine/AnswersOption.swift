import BLEHost
import Chipsets
import EightBall
import CLinux

enum AnswersOption: String {
    case slug, text
}
