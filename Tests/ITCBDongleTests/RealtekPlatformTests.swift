import Testing
@testable import ITCBDongle
import BLEHost

@Suite struct RealtekPlatformTests {
    @Test func test_realtek_list_controllers_file_guess() {
        #expect(realtekFileGuess(product: 0x8771, vendor: 0x0BDA) == "rtl8761bu_fw.bin")
        #expect(realtekFileGuess(product: 0x0604, vendor: 0x2357) == "rtl8761bu_fw.bin")
        #expect(realtekFileGuess(product: 0xC123, vendor: 0x0BDA) == "rtl8822cu_fw.bin")
        #expect(realtekFileGuess(product: 0x887B, vendor: 0x0BDA) == "rtl8852bu_fw.bin")
        #expect(realtekFileGuess(product: 0xB009, vendor: 0x0BDA) == "rtl8723d_fw.bin")
    }

    @Test func test_realtek_read_file() {
        #expect(FirmwareSetup.readFile("/nonexistent/rtl_bt/rtl8761bu_fw.bin", limit: 1 << 20) == nil)
        #expect(!FirmwareSetup.fileExists("/nonexistent/rtl_bt/rtl8761bu_fw.bin"))
        if let bytes = FirmwareSetup.readFile("/etc/hostname", limit: 1 << 20) {
            #expect(bytes.count > 0)
            bytes.deallocate()
        }
    }
}
