import Testing
import BLEHost
@testable import Chipsets
import TestSupport

// The Broadcom/Cypress entry of the chipset table, run by the core's driver as
// the Linux board runs it: recognition, the .hcd check, the download with its
// two pauses, the baud-rate change on a UART and the default-address check.

/// Two Write RAM records and Launch RAM, in the .hcd record format.
let hcd = hex("4c fc 06 00 00 21 00 aa bb  4c fc 05 06 00 21 00 cc  4e fc 04 ff ff ff ff")

func chipName(lmpSubversion: UInt16, overUSB: Bool) -> String? {
    BroadcomChip.name(lmpSubversion: lmpSubversion, overUSB: overUSB).map { "\($0)" }
}

func candidates(_ request: FileRequest) -> [String] {
    var names: [String] = []
    request.forEachCandidate { names.append(String(decoding: $0, as: UTF8.self)) }
    return names
}

@Suite struct BroadcomTests {
    @Test func chipNamesAsBtbcmMapsThem() {
        #expect(chipName(lmpSubversion: 0x2209, overUSB: false) == "BCM43430A1")
        #expect(chipName(lmpSubversion: 0x6606, overUSB: false) == "BCM4345C5")
        #expect(chipName(lmpSubversion: 0x2118, overUSB: true) == "BCM20702A0")
        // One subversion, two chips: the USB and UART tables differ.
        #expect(chipName(lmpSubversion: 0x4106, overUSB: false) == "BCM4335A0")
        #expect(chipName(lmpSubversion: 0x4106, overUSB: true) == "BCM4335B0")
        #expect(chipName(lmpSubversion: 0x2118, overUSB: false) == nil)
        #expect(BroadcomChip.isDefault(0xAAAA_AAAA_AAAA) && BroadcomChip.isDefault(0x4345_C500_1FAC))
        #expect(BroadcomChip.isDefault(0x4345_C000_1FAC), "the Pi 3B+'s, beyond btbcm.c's list")
        #expect(!BroadcomChip.isDefault(0x4345_C500_1FAD))
    }

    /// btbcm_initialize's order with a board name: the chip's name with the
    /// board, without it, then BCM with the board and without (on USB each
    /// with -<vid>-<pid>); the board's name is the first compatible entry.
    @Test func fileNamesAsBtbcmOrdersThem() {
        var uart = ChipsetContext()
        uart.uartBaud = 115_200
        append("raspberrypi,4-model-b", to: &uart.board)
        var request = FileRequest()
        BroadcomNames.add(chip: "BCM4345C0", context: uart, into: &request)
        #expect(candidates(request) == ["BCM4345C0.raspberrypi,4-model-b.hcd", "BCM4345C0.hcd",
                                        "BCM.raspberrypi,4-model-b.hcd", "BCM.hcd"])
        #expect(!request.optional)
        var usb = uart
        (usb.overUSB, usb.usbVendor, usb.usbProduct) = (true, 0x0A5C, 0x21E8)
        request = FileRequest()
        BroadcomNames.add(chip: "BCM20702A1", context: usb, into: &request)
        #expect(candidates(request) == ["BCM20702A1-0a5c-21e8.raspberrypi,4-model-b.hcd", "BCM20702A1-0a5c-21e8.hcd",
                                        "BCM-0a5c-21e8.raspberrypi,4-model-b.hcd", "BCM-0a5c-21e8.hcd", "BCM20702A1.hcd"])
        // No board: the chip's name, then BCM.hcd.
        request = FileRequest()
        BroadcomNames.add(chip: "BCM43430A1", context: ChipsetContext(), into: &request)
        #expect(candidates(request) == ["BCM43430A1.hcd", "BCM.hcd"])
    }

    /// Raspberry Pi OS's links (RPi-Distro/bluez-firmware, debian/bluez-firmware.links): board → chips.
    @Test func boardsChipsAsRaspberryPiOSLinksThem() {
        func chips(_ board: StaticString) -> [String] {
            var name = Capacity.ChipsetText()
            append(board, to: &name)
            return (0..<3).compactMap { variant -> String? in
                var query = BoardChipQuery(board: name, variant: variant)
                return ChipsetTable.boardChip(&query) ? text(query.chip.model) : nil
            }
        }
        #expect(chips("raspberrypi,3-model-b") == ["BCM43430A1"])
        #expect(chips("raspberrypi,model-zero-2-w") == ["BCM43430A1", "BCM43430B0"])
        #expect(chips("raspberrypi,4-compute-module") == ["BCM4345C0", "BCM4345C5"])
        #expect(chips("raspberrypi,400") == ["BCM4345C5"])
        #expect(chips("raspberrypi,5-model-b") == ["BCM4345C0"])
        #expect(chips("brcm,bcm2711") == [], "a board Raspberry Pi OS links no file for")
        #expect(chipName(lmpSubversion: 0x2310, overUSB: false) == "BCM4343A2")
        #expect(chipName(lmpSubversion: 0x420E, overUSB: false) == "BCM4349B1")
    }

    @Test func hcdCheck() {
        #expect(hcd.withRaw { try? BroadcomPatchram.check($0) } == 3)
        func refusal(_ bytes: [UInt8]) -> BroadcomError? {
            bytes.withRaw { raw in
                do throws(BroadcomError) { _ = try BroadcomPatchram.check(raw) } catch { return error }
                return nil
            }
        }
        #expect(refusal([]) == .emptyFile)
        #expect(refusal(Array(hcd.dropLast())) == .truncatedRecord)
        #expect(refusal(Array(hcd.prefix(2))) == .truncatedRecord)
        #expect(refusal(Array(hcd.prefix(17))) == .noLaunchRAM)
        #expect(refusal(hex("03 0c 00") + hcd) == .notVendorCommand)
    }

    /// A probing driver whose controller says BCM43430A1 (Broadcom, 0x2209), on a UART asked to go to 3,000,000 baud.
    func piDriver(_ o: inout RecordingObserver, targetBaud: UInt32 = 3_000_000) -> TestDriver<VendorSetup> {
        var context = ChipsetContext()
        context.uartBaud = 115_200
        context.uartTargetBaud = targetBaud
        return probedDriver(localVersion(manufacturer: 15, hciVersion: 6, revision: 0x1100, subversion: 0x2209), &o, context: context)
    }

    @Test func patchramDownloadWithPausesBaudRateAndDefaultAddress() {
        var o = RecordingObserver()
        var d = piDriver(&o)
        #expect(d.state == .needsFiles && d.setup.active == 2, "the table's Broadcom entry took it")
        var sent: [[UInt8]] = []
        hcd.withRaw { file in
            d.provideFiles(firmware: file, companion: UnsafeRawBufferPointer(start: nil, count: 0), now: 30)
            sent += drain(&d)
            #expect(sent == [hex("01 2e fc 00")])
            deliver(&d, commandComplete(0xFC2E), now: 40, &o)
            // 50 ms after Download Minidriver before the first record.
            #expect(drain(&d).isEmpty)
            #expect(d.nextDeadline() == 90)
            #expect(d.check(now: 89) == .settingUp)
            _ = d.check(now: 90)
            var now: UInt64 = 90
            for _ in 0..<3 {
                let records = drain(&d)
                #expect(records.count == 1)
                sent += records
                now += 5
                deliver(&d, commandComplete(opcodeOf(records[0])!), now: now, &o)
            }
        }
        #expect(sent == [hex("01 2e fc 00"), hex("01 4c fc 06 00 00 21 00 aa bb"), hex("01 4c fc 05 06 00 21 00 cc"), hex("01 4e fc 04 ff ff ff ff")])
        // Launch RAM answered at 105: silence for the restart, then Reset.
        #expect(drain(&d).isEmpty)
        #expect(d.setup.status.portBaudRate == 115_200)
        #expect(d.nextDeadline() == 355)
        #expect(d.check(now: 355) == .settingUp)
        #expect(drain(&d) == [hciReset])
        deliver(&d, resetComplete, now: 360, &o)
        // 100 ms after that Reset (btbcm_reset's msleep(100)) before Read Local Version.
        #expect(drain(&d).isEmpty)
        #expect(d.nextDeadline() == 460)
        #expect(d.check(now: 459) == .settingUp && drain(&d).isEmpty)
        _ = d.check(now: 460)
        #expect(drain(&d) == [readLocalVersion])
        deliver(&d, commandComplete(HCIOpcode.readLocalVersion, localVersion(manufacturer: 15, hciVersion: 6, revision: 0x1123, subversion: 0x2209)), now: 470, &o)
        // Update UART Baud Rate: two zero bytes, 3,000,000 little-endian; the port follows once it is answered.
        #expect(drain(&d) == [hex("01 18 fc 06 00 00 c0 c6 2d 00")])
        #expect(d.setup.status.portBaudRate == 115_200, "the restart put the chip's UART back at 115200")
        deliver(&d, commandComplete(0xFC18), now: 480, &o)
        #expect(d.setup.status.portBaudRate == 3_000_000)
        #expect(drain(&d) == [hex("01 09 10 00")])
        deliver(&d, commandComplete(HCIOpcode.readBDAddr, [0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA]), now: 490, &o)
        #expect(d.state == .running)
        #expect(d.setup.status.sharedDefaultAddress?.value == 0xAAAA_AAAA_AAAA)
        #expect(d.setup.table.broadcom.loader.patchedBuild == 0x123 && d.setup.table.broadcom.loader.romBuild == 0x100)
        #expect(drain(&d) == [hciReset], "the host's own bring-up")
    }

    @Test func aCommandTheROMRefusesFailsTheSetUp() {
        var o = RecordingObserver()
        var d = piDriver(&o, targetBaud: 0)
        hcd.withRaw { file in
            d.provideFiles(firmware: file, companion: UnsafeRawBufferPointer(start: nil, count: 0), now: 30)
            _ = drain(&d)
            deliver(&d, commandComplete(0xFC2E), now: 40, &o)
            _ = d.check(now: 90)
            _ = drain(&d)
            deliver(&d, commandComplete(0xFC4C, status: 0x12), now: 95, &o)
        }
        #expect(d.check(now: 95) == .finished(.setupFailed))
        #expect(d.setup.table.broadcom.loader.error == .commandFailed)
    }

    @Test func aUSBDongleWithoutItsFileRunsFromROM() {
        var o = RecordingObserver()
        var context = ChipsetContext()
        (context.overUSB, context.usbVendor, context.usbProduct) = (true, 0x0A5C, 0x21E8)
        let plan = VendorSetup.plan(for: &context, probe: false)
        #expect(plan == .probe(only: 2))
        var d = makeDriver(VendorSetup(plan: plan, context: context))
        d.start(now: 0)
        #expect(drain(&d) == [hciReset])
        deliver(&d, resetComplete, now: 10, &o)
        _ = drain(&d)
        deliver(&d, commandComplete(HCIOpcode.readLocalVersion, localVersion(manufacturer: 15, hciVersion: 6, revision: 0x1000, subversion: 0x220E)), now: 20, &o)
        #expect(d.state == .needsFiles)
        var request = FileRequest()
        d.setup.table.broadcom.files(&request)
        // Linux's two names (btbcm_initialize, no board), then the one BCM20702 files are usually installed under.
        #expect(candidates(request) == ["BCM20702A1-0a5c-21e8.hcd", "BCM-0a5c-21e8.hcd", "BCM20702A1.hcd"])
        #expect(request.optional)
        // No file: no download, straight to the address check.
        d.provideFiles(firmware: UnsafeRawBufferPointer(start: nil, count: 0), companion: UnsafeRawBufferPointer(start: nil, count: 0), now: 30)
        #expect(drain(&d) == [hex("01 09 10 00")])
        deliver(&d, commandComplete(HCIOpcode.readBDAddr, [0x00, 0x00, 0xA0, 0x02, 0x70, 0x20]), now: 40, &o)
        #expect(d.state == .running && d.setup.status.sharedDefaultAddress?.value == 0x2070_02A0_0000)
        #expect(!d.setup.table.broadcom.loader.patched)
    }

    /// A serial port is probed without --firmware-dir, for the chipsets probed on every UART only.
    @Test func aBareUARTIsProbedForBroadcomOnly() {
        var tcp = ChipsetContext()
        #expect(VendorSetup.plan(for: &tcp, probe: false) == .none)
        var uart = ChipsetContext()
        uart.uartBaud = 115_200
        let plan = VendorSetup.plan(for: &uart, probe: false)
        #expect(plan == .probe(only: nil) && !uart.probeEveryChipset)
        var o = RecordingObserver()
        func probed(_ version: [UInt8]) -> TestDriver<VendorSetup> { probedDriver(version, &o, context: uart) }
        // An un-patched RTL8761B on a bare UART: left alone, as before the table.
        var realtek = probed(localVersion(manufacturer: 0x005D, hciVersion: 0x0A, revision: 0x0B, subversion: 0x8761))
        #expect(realtek.state == .running && realtek.setup.active == nil)
        var broadcom = probed(localVersion(manufacturer: 305, hciVersion: 9, revision: 0x1000, subversion: 0x6606))
        #expect(broadcom.state == .needsFiles && broadcom.setup.active == 2)
    }
}
