import BLEHost
import Chipsets
import EightBall
import CLinux

enum AnswersOption: String, CaseIterable {
    case slug, text
}
