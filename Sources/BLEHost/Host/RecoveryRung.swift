/// What a controller that stops answering mid-run gets, one rung
/// per command it leaves unanswered since it last finished bring-up: the
/// host's HCI Reset and bring-up, then the board's port reset and a fresh
/// bring-up (`.portResetWanted`), then the end (`.controllerSilent`, or
/// `.notReady` in a session opened for the port reset), so a supervisor
/// restarts the process. A bring-up that finishes leaves the ladder.
public enum RecoveryRung: Int, Equatable {
    case hciReset = 1, portReset, exit
}
