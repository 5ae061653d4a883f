/// The driver's small state (timers, flags, counters).
struct DriverProgress {
    var state = DriverState.running
    var isStopping = false
    var wasReady = false
    var framingResets = 0
    var droppedPackets = 0
    var lastInput: UInt64 = 0
    var lastAnswer: UInt64 = 0
    var readyDeadline: UInt64 = 0
    var hardStop: UInt64 = 0
    var nextHealthCheck: UInt64 = 0
    var nextScanProbe: UInt64 = 0
    var wantsPortReset = false
    var controllerWentSilent = false
    /// Where the controller is on the recovery ladder; nil while it answers.
    var rung: RecoveryRung? = nil
    // Set-up.
    var setupCommandPending = false
    var setupDeadline: UInt64 = 0
    /// When the set-up's pause ends (UInt64.max: none).
    var setupResume = UInt64.max
    var setupAnswered = false
    /// The set-up's shutdown step runs (`ControllerSetup.shutdown`): its end is the driver's.
    var setupShuttingDown = false
}
