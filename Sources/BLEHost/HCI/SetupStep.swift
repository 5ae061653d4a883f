/// What a controller needs before the host's own bring-up (HCI Reset, reads,
/// LE set-up): a vendor's firmware download, or nothing. The driver runs it as
/// the first step of the controller's init sequence (BTstack's
/// HCI_INIT_CUSTOM_INIT with the chipset's next_command): HCI events in, one
/// command at a time out, the files asked of the board.
public enum SetupStep: Equatable {
    /// A command is ready: the driver sends it (`command(into:)`).
    case send
    /// Nothing to do until the next HCI event.
    case wait
    /// The board must read the files the set-up names and call `provide`.
    case needFiles
    /// The host may bring the controller up.
    case done
    /// The download cannot go on (the set-up says why).
    case failed
    /// The board resets the USB port (the device enumerates afresh) and
    /// begins the set-up again: what Linux does after a chip's own reset
    /// (MediaTek's `btusb_mtk_reset`). Only a USB board's set-up asks it.
    case resetPort
}
