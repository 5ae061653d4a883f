import CLinux
import BLEHost

/// The interactive central's prompt ("Ask the 8-Ball: ") while it waits on its
/// line: whatever is written next (a log line, an answer) first ends that line,
/// so nothing lands on the prompt; QuestionSource shows the prompt again below.
enum PromptLine {
    nonisolated(unsafe) static var showing = false

    static func show(_ prompt: StaticString) {
        write(prompt)
        showing = true
    }

    /// The user ended the line (Enter: the terminal echoed the newline).
    static func answered() { showing = false }

    /// Ends the prompt's line if it is on screen (Ctrl-D, Ctrl-C, a log line).
    static func end() {
        guard showing else { return }
        showing = false
        write("\n")
    }

    /// A literal straight to fd 2 (no String, no buffer made of it).
    @inline(never)
    private static func write(_ text: StaticString) {
        _ = sysWrite(2, text.utf8Start, text.utf8CodeUnitCount)
    }
}
