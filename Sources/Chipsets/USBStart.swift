import BLEHost

/// How a chipset's USB dongle starts.
public enum USBStart: Equatable {
    /// Reset and Read Local Version first; the chipset takes over when it recognises the answer.
    case probe
    /// The chipset's own set-up from HCI Reset on (a boot loader that does not answer Read Local Version).
    case fromReset
}
