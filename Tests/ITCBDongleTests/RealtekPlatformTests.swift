import Testing
import Glibc
@testable import ITCBDongle
import BLEHost

@Suite struct RealtekPlatformTests {
    @Test func test_realtek_list_controllers_file_guess() {
        #expect(firmwareGuess(vendor: 0x0BDA, product: 0x8771)?.file == "rtl_bt/rtl8761bu_fw.bin")
        #expect(firmwareGuess(vendor: 0x2357, product: 0x0604)?.file == "rtl_bt/rtl8761bu_fw.bin")
        #expect(firmwareGuess(vendor: 0x0BDA, product: 0xC123)?.file == "rtl_bt/rtl8822cu_fw.bin")
        #expect(firmwareGuess(vendor: 0x0BDA, product: 0x887B)?.file == "rtl_bt/rtl8852bu_fw.bin")
        #expect(firmwareGuess(vendor: 0x0BDA, product: 0xB009)?.file == "rtl_bt/rtl8723d_fw.bin")
        // The table answers for every chipset: Intel names the model, Broadcom the Linux file name.
        #expect(firmwareGuess(vendor: 0x8087, product: 0x0032)?.file == "intel/ibt-0041-0041.sfi")
        #expect(firmwareGuess(vendor: 0x0A5C, product: 0x21E8)?.file == "brcm/BCM20702A1-0a5c-21e8.hcd")
        #expect(firmwareGuess(vendor: 0x0A12, product: 0x0001) == nil)
        // --list-controllers names the Debian package that ships each file.
        #expect(firmwareGuess(vendor: 0x0BDA, product: 0x8771)?.package == "firmware-realtek")
        #expect(firmwareGuess(vendor: 0x8087, product: 0x0032)?.package == "firmware-iwlwifi")
        #expect(firmwareGuess(vendor: 0x0A5C, product: 0x21E8)?.package == "")  // no Debian package ships BCM20702 files
        #expect(firmwareGuess(vendor: 0x13D3, product: 0x3568)?.package == "firmware-mediatek")
    }

    /// --list-controllers' row for the board's own UART radio: only when the port is there.
    @Test func test_board_uart_row() throws {
        #expect(boardUARTRow("/lib/firmware", path: "/nonexistent/serial1") == nil)
        let row = try #require(boardUARTRow("/fw", path: "/dev/null"))
        #expect(row[0...2] == ["UART", "serial:/dev/null", "(probed)"])
        #expect(row[4].hasPrefix("/fw/brcm/BCM"))
    }

    /// --list-controllers' columns line up whatever a cell's width: the UART's
    /// path is wider than a USB one.
    @Test func listColumnsAreAligned() {
        let lines = laidOut([["VID:PID", "PATH", "DRIVER", "PRODUCT"],
                                    ["0a12:0001", "usb:1-1.2", "btusb", "CSR8510 A10"],
                                    ["UART", "serial:/dev/serial1", "(probed)", "the board's Bluetooth UART"]])
        #expect(lines[0] == "VID:PID    PATH                 DRIVER    PRODUCT")
        #expect(lines[1] == "0a12:0001  usb:1-1.2            btusb     CSR8510 A10")
        #expect(lines[2] == "UART       serial:/dev/serial1  (probed)  the board's Bluetooth UART")
    }
}
