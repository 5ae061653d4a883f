import CLinux
import BLEHost
import Chipsets

/// What a role adds to the host on Linux: the application (`HostApplication`)
/// plus an exit code when it is done and its part of the status line.
protocol RoleLogic: HostApplication, ~Copyable {
    /// Set when the role finished by itself (central: all questions asked).
    var exitCode: Int32? { get }
    /// The role's part of the SIGHUP status line (", 12 question(s) answered"),
    /// appended where the line is built (no BuiltText of its own).
    mutating func appendStatusDetail(to status: inout BuiltText.Builder)
    /// The role's counts of the session (--metrics-file, the status line):
    /// questions, their outcomes and latencies.
    mutating func addCounts(to counts: inout MetricCounts)
}

extension RoleLogic where Self: ~Copyable {
    mutating func appendStatusDetail(to status: inout BuiltText.Builder) {}
    mutating func addCounts(to counts: inout MetricCounts) {}
    var isFinished: Bool { exitCode != nil }
}
