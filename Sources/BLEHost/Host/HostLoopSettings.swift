public struct HostLoopSettings {
    /// Bring-up (after any vendor set-up) must finish by then, or the controller
    /// is dead (nil: keep trying, as firmware does: the host re-initialises a
    /// controller that does not answer).
    public var readyTimeout: UInt64? = 10_000
    /// Probe an idle controller this often (--health-check, the systemd watchdog).
    public var healthInterval: UInt64? = nil
    /// A packet begun and not finished for this long means the H4 framing is lost.
    public var stallLimit: UInt64 = 1_000
    /// A central's scan that hears nothing this long probes the controller.
    public var scanProbeInterval: UInt64 = 1_000
    /// A stop waits this long for the controller to confirm: SIGTERM ends a
    /// board within a second whatever the controller does.
    public var stopGrace: UInt64 = 900
    /// The set-up's shutdown step (`ControllerSetup.shutdown`, after the
    /// host's stop) waits this long for its answer (a WMT answer comes in
    /// milliseconds), then the stop ends all the same.
    public var setupShutdownTimeout: UInt64 = 500
    /// The transport can reset the controller's port once (USB opened without a
    /// reset): a controller that answers nothing at first asks for it.
    public var offersPortReset = false
    /// HCI Reset answers in milliseconds: this long without any answer at the
    /// start of a vendor set-up is a hung dongle.
    public var firstAnswerTimeout: UInt64 = 3_000
    /// A command the controller leaves unanswered (the host's command timeout)
    /// ends the driver instead of re-initialising the controller: a one-shot
    /// board (the asker) has no state worth a recovery and must say at once
    /// that its controller went quiet (`.notReady` before bring-up finished,
    /// `.controllerSilent` after).
    public var endsOnSilentController = false
    /// A long-running board climbs the recovery ladder (`RecoveryRung`) with a
    /// controller that stops answering after bring-up; false: the host
    /// re-initialises it for ever (firmware, which has nothing else to try).
    public var climbsRecoveryLadder = false
    /// The board can reset the controller's port and bring it up afresh (USB):
    /// the ladder's second rung; without it the first is followed by the last.
    public var offersPortResetRung = false
    /// The rung a session begins on: `.portReset` for a session the board
    /// opened for that rung, so a bring-up left unanswered goes on to the last.
    public var startingRung: RecoveryRung? = nil

    public init() {}
}
