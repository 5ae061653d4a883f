import BLEHost
import Chipsets
import EightBall
import CLinux

enum AnswersOption: String, CaseIterable {
    case slug, text

    /// The rawValue for messages (BuiltText appends it as it is).
    var name: StaticString { self == .slug ? "slug" : "text" }

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
