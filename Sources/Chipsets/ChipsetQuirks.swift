import BLEHost

/// Work-arounds as data: a clone that needs one is a line in its chipset's
/// `info`, not a branch in the transport or the driver.
public struct ChipsetQuirks: Equatable, Sendable {
    /// A USB dongle works from ROM: a missing firmware file is a warning and
    /// the controller runs as it is (false: an error, exit 4, naming the file
    /// and the package).
    public var runsFromROMOverUSB: Bool
    /// Probed on every UART, --firmware-dir given or not: the chip has no
    /// other identity (the Raspberry Pi's own radio); other chipsets are
    /// probed on a UART or TCP only when --firmware-dir is given.
    public var probedOnEveryUART: Bool
    /// Over USB the set-up's vendor commands are answered through control IN
    /// and its register commands are vendor control requests (`USBVendorControl`):
    /// the USB board does both on the steps' behalf.
    public var vendorControlOverUSB: Bool
    /// The chip has its own reset (MediaTek's Bluetooth subsystem reset): a
    /// controller that stops answering gets it (`ChipsetContext.resetFirst`)
    /// before the board resets its USB port.
    public var ownReset: Bool
    public init(runsFromROMOverUSB: Bool = false, probedOnEveryUART: Bool = false, vendorControlOverUSB: Bool = false,
                ownReset: Bool = false) {
        self.runsFromROMOverUSB = runsFromROMOverUSB
        self.probedOnEveryUART = probedOnEveryUART
        self.vendorControlOverUSB = vendorControlOverUSB
        self.ownReset = ownReset
    }
}
