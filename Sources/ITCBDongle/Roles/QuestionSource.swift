import BLEHost
import EightBall
import CLinux

/// Where the central's questions come from: --question (each --count times) or
/// standard input, one per line (a prompt when it is a terminal).
final class QuestionSource {
    /// The questions, each once (`next` repeats each --count times); those
    /// before `head` are asked (no removal from the front per question).
    var queue: [String]
    var head = 0
    let interactive: Bool
    let fromStdin: Bool
    var stdinBuffer: [UInt8] = []
    var stdinClosed = false
    /// Lines taken as questions so far (0 at EOF: stdin was empty).
    var taken = 0

    init(questions: [String], count: Int) {
        fromStdin = questions.isEmpty
        queue = questions
        interactive = fromStdin && isatty(0) == 1
        if fromStdin { _ = fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK) }
        self.count = count
    }
    let count: Int

    /// Whether the run loop polls standard input for questions (a Bool, not
    /// an array of one pollfd made at each wake-up).
    var pollsStdin: Bool { fromStdin && !stdinClosed }

    var exhausted: Bool { head == queue.count && (!fromStdin || stdinClosed) }

    /// Shows the prompt unless it is on screen already (PromptLine: anything
    /// written below it ends its line, and the next pass shows it again).
    func prompt() {
        guard interactive, !PromptLine.showing, head == queue.count, !stdinClosed else { return }
        PromptLine.show("Ask the 8-Ball: ")
    }

    /// Reads what stdin has; complete lines become questions (each --count times).
    func readStdin() {
        // Read into the stack (an array of 1 KB was made and freed per call).
        withUnsafeTemporaryAllocation(byteCount: 1024, alignment: 1) { chunk in
            while true {
                let n = sysRead(0, chunk.baseAddress, chunk.count)
                if n > 0 {
                    stdinBuffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
                } else {
                    if n == 0 {
                        stdinClosed = true
                        PromptLine.end()  // Ctrl-D on the prompt's line echoes no newline
                    }
                    break
                }
            }
        }
        while let newline = stdinBuffer.firstIndex(of: 0x0A) {
            take(stdinBuffer[0..<newline])
            stdinBuffer.removeFirst(newline + 1)
        }
        if stdinClosed, !stdinBuffer.isEmpty {
            take(stdinBuffer[...])
            stdinBuffer = []
        }
    }

    func take(_ line: ArraySlice<UInt8>) {
        let bytes = line.last == 0x0D ? line.dropLast() : line
        let text = String(repairingUTF8: bytes)
        if interactive { PromptLine.answered() }  // Enter ended the line; an empty one gets the prompt again
        guard !text.trimmingCharacters().isEmpty else { return }
        taken += 1
        queue.append(text)
    }

    /// The first question, asked --count times before it leaves the queue (each kept
    /// once: no array of copies made by generic code).
    func next() -> String? {
        guard head < queue.count else { return nil }
        let first = queue[head]
        asksLeft = (asksLeft == 0 ? count : asksLeft) - 1
        if asksLeft <= 0 {  // <= : a count below 1 (refused by the command line) still ends
            head += 1
            if head == queue.count { queue = []; head = 0 }  // all asked: their Strings freed
        }
        return first
    }
    /// Times the first question is still to be asked after this one; 0: not asked yet.
    var asksLeft = 0
}
