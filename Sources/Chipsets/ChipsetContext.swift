import BLEHost

/// Where the controller is: what a chipset may need to know about its transport.
public struct ChipsetContext {
    public var overUSB = false
    public var usbVendor: UInt16 = 0
    public var usbProduct: UInt16 = 0
    /// Its device or interface 0 is vendor-specific FF/01/01 (`USBClaim.vendorClass`).
    public var usbVendorClass = false
    /// A UART (not TCP, not USB): its current rate, and the rate the controller may be switched to (0: none).
    public var uartBaud: UInt32 = 0
    public var uartTargetBaud: UInt32 = 0
    /// Every chipset is asked (--firmware-dir given); else only those probed on every UART.
    public var probeEveryChipset = true
    /// The controller stopped answering in the last session: a chipset with its
    /// own reset (`ChipsetQuirks.ownReset`) runs it before its set-up.
    public var resetFirst = false
    /// The board's name as Linux `btbcm.c` makes it (`btbcm_get_board_name`):
    /// the device tree root's first `compatible` entry, '/' written as '-';
    /// empty when there is no device tree. The platform reads it.
    public var board = Capacity.ChipsetText()
    public init() {}
}
