public enum HostLoopEnd: Equatable {
    /// The host stopped (the application finished, or a stop completed).
    case stopped
    /// The controller did not confirm a stop within `stopGrace`.
    case stopTimedOut
    /// Bring-up did not finish within `readyTimeout` (or, with
    /// `endsOnSilentController`, a bring-up command was never answered).
    case notReady
    /// The controller left a command unanswered after bring-up
    /// (`endsOnSilentController`), or the recovery ladder reached its last rung.
    case controllerSilent
    /// Nothing was ever answered and a port reset may help.
    case portResetWanted
    /// The vendor set-up failed (its state says why).
    case setupFailed
    /// The controller stopped answering during the vendor set-up.
    case setupSilent
}
