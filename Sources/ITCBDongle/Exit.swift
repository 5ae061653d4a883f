/// Documented exit codes (README "Exit codes").
enum Exit {
    static let success: Int32 = 0
    /// Unexpected internal failure.
    static let failure: Int32 = 1
    /// Bad command line (unknown flag, bad value).
    static let usage: Int32 = 2
    /// The transport could not be opened, or was lost while running.
    static let transport: Int32 = 3
    /// The controller never completed bring-up.
    static let controller: Int32 = 4
    /// Central: the 8-Ball refused a question (ATT 0x0E, "please rephrase as a question").
    static let rejected: Int32 = 5
    /// Central: no 8-Ball found in range.
    static let notFound: Int32 = 6
    /// Central: no answer in time ("device offline").
    static let timeout: Int32 = 7
    /// USB: the dongle was unplugged and --exit-on-unplug was given.
    static let unplugged: Int32 = 8
}
