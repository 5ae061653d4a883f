import CLinux
import BLEHost
import Chipsets

/// What a role adds to the host on Linux: the application (`HostApplication`)
/// plus an exit code when it is done and its part of the status line.
protocol RoleLogic: HostApplication, ~Copyable {
    /// Set when the role finished by itself (central: all questions asked).
    var exitCode: Int32? { get }
    /// The role's part of the SIGHUP status line ("12 question(s) answered").
    var statusDetail: String? { get }
    /// Questions answered and rejected (--metrics-file; the 8-Ball's).
    var questionCounts: (answered: Int, rejected: Int) { get }
}

extension RoleLogic where Self: ~Copyable {
    var statusDetail: String? { nil }
    var questionCounts: (answered: Int, rejected: Int) { (0, 0) }
    var isFinished: Bool { exitCode != nil }
}
