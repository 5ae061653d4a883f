import BLEHost
import Chipsets
import EightBall
import CLinux

enum AnswersOption: String, CaseIterable {
    case slug, text

    /// The style an argument names, by its bytes.
    init?(_ text: ArgText) {
        if text.isBytes("slug") {
            self = .slug
        } else if text.isBytes("text") {
            self = .text
        } else {
            return nil
        }
    }
}
