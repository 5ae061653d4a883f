/// How one transport session (one run loop) ended.
enum SessionEnd: Equatable {
    /// With this exit status (`Exit`). `Exit.unplugged` ends the process only
    /// with --exit-on-unplug; otherwise the next session waits for the dongle.
    case exit(Int32)
    /// The controller did not answer its first command on a USB transport
    /// opened without a port reset (a dongle that hangs after a warm start):
    /// the session is opened again, once, with one. `ladder`: the recovery
    /// ladder's second rung (a controller that stopped answering mid-run):
    /// the next session begins on that rung.
    case reopenWithPortReset(ladder: Bool)
    /// The ladder's second rung for a chip with its own reset (MediaTek's
    /// Bluetooth subsystem reset): the session is opened again without a port
    /// reset, the chip's reset first; the port reset if it stays silent.
    case reopenWithChipReset
}
