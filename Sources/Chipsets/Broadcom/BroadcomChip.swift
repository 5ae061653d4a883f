import BLEHost

/// A chip name from Read Local Version's LMP subversion, as `btbcm.c`'s tables
/// map them (one for USB, one for UART: a few subversions name different chips).
public enum BroadcomChip {
    public static func name(lmpSubversion: UInt16, overUSB: Bool) -> StaticString? {
        overUSB ? usbName(lmpSubversion) : uartName(lmpSubversion)
    }

    static func uartName(_ subversion: UInt16) -> StaticString? {
        switch subversion {
        case 0x1111: "BCM4362A2"
        case 0x4103: "BCM4330B1"
        case 0x410D: "BCM4334B0"
        case 0x410E: "BCM43341B0"
        case 0x4204: "BCM2076B1"
        case 0x4406: "BCM4324B3"
        case 0x4606: "BCM4324B5"
        case 0x6109: "BCM4335C0"
        case 0x610C: "BCM4354"
        case 0x2122: "BCM4343A0"
        case 0x2209: "BCM43430A1"
        case 0x6119: "BCM4345C0"
        case 0x6606: "BCM4345C5"
        case 0x230F: "BCM4356A2"
        // CYW43439 (Raspberry Pi OS's bluez-firmware ships BCM4343A2.hcd since
        // 1.2-9+rpt3): the Linux patch that adds it to btbcm.c's UART table.
        case 0x2310: "BCM4343A2"
        case 0x220E: "BCM20702A1"
        case 0x420D, 0x420E: "BCM4349B1"
        case 0x4217: "BCM4329B1"
        case 0x6106: "BCM4359C0"
        case 0x4106: "BCM4335A0"
        case 0x410C: "BCM43430B0"
        case 0x2119: "BCM4373A0"
        default: nil
        }
    }

    static func usbName(_ subversion: UInt16) -> StaticString? {
        switch subversion {
        case 0x2105: "BCM20703A1"
        case 0x210B: "BCM43142A0"
        case 0x2112: "BCM4314A0"
        case 0x2118: "BCM20702A0"
        case 0x2126: "BCM4335A0"
        case 0x220E: "BCM20702A1"
        case 0x230F: "BCM4356A2"
        case 0x4106: "BCM4335B0"
        case 0x410E: "BCM20702B0"
        case 0x6109: "BCM4335C0"
        case 0x610C: "BCM4354"
        case 0x6607: "BCM4350C5"
        default: nil
        }
    }

    /// Company identifiers: Broadcom 15, Cypress Semiconductor 305.
    public static func isBroadcom(manufacturer: UInt16) -> Bool { manufacturer == 15 || manufacturer == 305 }

    /// Addresses whole models share (`btbcm.c`'s list, where the kernel marks
    /// them "no address", and the Pi 3B+'s), as `BDAddress.value` (most
    /// significant byte first in text).
    public static func isDefault(_ address: UInt64) -> Bool {
        switch address {
        case 0x0020_7002_A000,  // BCM20702A0
             0x2070_02A0_0000,  // BCM20702A1
             0x2076_A000_5679,  // BCM2076B1
             0x4343_A012_1FAC,  // BCM43430A0
             0xAAAA_AAAA_AAAA,  // BCM43430A1 (Raspberry Pi 3B+, Zero 2 W)
             0x4324_B300_0000,  // BCM4324B3
             0x4330_B100_0000,  // BCM4330B1
             0x4334_B000_0000,  // BCM4334B0
             0x4345_C500_1FAC,  // BCM4345C5 (Raspberry Pi 4, 5, CM4)
             // Not in btbcm.c (on a Pi, Linux sets the board's address from the
             // device tree), but every Pi 3B+ reports it: BCM4345C0.
             0x4345_C000_1FAC,
             0x4334_1B00_1FAC,  // BCM43341B
             0x4384_B000_7693:  // BCM4384B0
            true
        default:
            false
        }
    }

    /// USB dongles served by VID:PID: Broadcom's VID 0a5c, and OEM dongles
    /// built on BCM20702 (the ASUS USB-BT400 is 0b05:17cb: Broadcom's Windows
    /// INF, and Linux asking for BCM20702A1-0b05-17cb.hcd; 19ff:0239 is a row of
    /// Linux btusb's device table, BTUSB_BCM_PATCHRAM).
    public static func isKnownUSB(vendor: UInt16, product: UInt16) -> Bool {
        if vendor == 0x0A5C { return true }
        switch (UInt32(vendor) << 16) | UInt32(product) {
        case 0x0B05_17CB,  // ASUS USB-BT400
             0x413C_8197,  // Dell DW380
             0x050D_065A,  // Belkin F8T065BF
             0x0489_E031,  // Foxconn (BCM20702)
             0x19FF_0239:  // Dynex/Insignia (BCM20702B0)
            return true
        default:
            return false
        }
    }

    /// The vendors whose every FF/01/01 interface Linux btusb hands to
    /// Broadcom's patchram set-up (its `USB_VENDOR_AND_INTERFACE_INFO(vid,
    /// 0xff, 0x01, 0x01)` rows with BTUSB_BCM_PATCHRAM; Apple's 05ac row is
    /// BTUSB_BCM_APPLE, no patchram): Foxconn, Lite-On, Belkin, Toshiba,
    /// Broadcom, ASUS, HTC, Foxconn/Lenovo, IMC Networks, Dell.
    public static func isPatchramVendor(_ vendor: UInt16) -> Bool {
        switch vendor {
        case 0x0489, 0x04CA, 0x050D, 0x0930, 0x0A5C, 0x0B05, 0x0BB4, 0x105B, 0x13D3, 0x413C: true
        default: false
        }
    }
}
