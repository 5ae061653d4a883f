import Testing
import BLEHost
@testable import Chipsets
import TestSupport

// The MediaTek entry of the chipset table, run by the core's driver as the
// Linux board runs it: the register reads, the file's name and check, each
// section's status query and download in WMT commands, the activation pause,
// Bluetooth on; a warm start; the malformed answers that end the set-up.

func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

/// A RAM code in the `_hdr.bin` layout: two sections, the first 300 bytes to
/// load (two WMT commands: 250 and 50), the second nothing to load.
let ramCode: [UInt8] = {
    var file = Array("20250305133215\0\0".utf8) + Array("ALPS".utf8) + [0x8A, 0, 0x8A, 0] + le32(0xFFFF_FFFF) + le32(0)
    file += le32(0) + le32(0) + le32(0) + le32(2) + [UInt8](repeating: 0, count: 48)
    func map(type: UInt32, offset: UInt32, size: UInt32, load: UInt32) -> [UInt8] {
        le32(type) + le32(offset) + le32(size) + le32(0x0090_0000) + le32(load) + [UInt8](repeating: 0x5A, count: 44)
    }
    file += map(type: 0x0001_0002, offset: 224, size: 300, load: 300)
    file += map(type: 1, offset: 524, size: 4, load: 0)
    return file + (0..<304).map { UInt8(truncatingIfNeeded: $0) }
}()

/// A register read as the driver sends it (WMT operation 8, the id space).
func registerRead(_ address: UInt32) -> [UInt8] { hex("01 6f fc 0a 01 08 06 00 00 02") + le32(address) }
/// The chip's answer: status 0 and the value.
func registerAnswer(_ value: UInt32, status: UInt8 = 0) -> [UInt8] { hex("e4 0a 02 08 06 00 00") + [status] + le32(value) }
/// A WMT answer of `operation` with `flag`.
func wmtAnswer(_ operation: UInt8, flag: UInt8 = 0, _ data: [UInt8] = []) -> [UInt8] {
    [0xE4, UInt8(5 + data.count), 0x02, operation, UInt8(data.count + 1), 0, flag] + data
}

func mediatekError(_ bytes: [UInt8]) -> MediaTekError? {
    bytes.withRaw { raw in
        do throws(MediaTekError) { _ = try MediaTekRAMCode.check(raw) } catch { return error }
        return nil
    }
}

@Suite struct MediaTekTests {
    @Test func fileNamesAsTheKernelWritesThem() {
        func name(_ id: UInt32, _ version: UInt32, flavour: Bool = false) -> String {
            var out = Capacity.ChipsetText()
            MediaTekChip.writeFileName(id: id, version: version, flavour: flavour, into: &out)
            return out.withBytes { String(decoding: $0, as: UTF8.self) }
        }
        #expect(name(0x7961, 1) == "BT_RAM_CODE_MT7961_1_2_hdr.bin")
        #expect(name(0x7961, 0x8A01, flavour: true) == "BT_RAM_CODE_MT7961_1a_2_hdr.bin")
        #expect(name(0x7922, 0) == "BT_RAM_CODE_MT7922_1_1_hdr.bin")
        #expect(name(0x0000_7925, 0) == "mt7925/BT_RAM_CODE_MT7925_1_1_hdr.bin")
        #expect(name(0x7922, 0x0F) == "BT_RAM_CODE_MT7922_1_10_hdr.bin")
        #expect(MediaTekChip.name(id: 0x7663) == nil)
    }

    @Test func usbIDsFromTheKernelsTable() {
        #expect(MediaTekChip.usbChip(vendor: 0x13D3, product: 0x3563) == 0x7961)
        #expect(MediaTekChip.usbChip(vendor: 0x0489, product: 0xE0CD) == 0x7961)
        #expect(MediaTekChip.usbChip(vendor: 0x0489, product: 0xE0E0) == 0x7961)
        #expect(MediaTekChip.usbChip(vendor: 0x0E8D, product: 0x0608) == 0x7961)
        #expect(MediaTekChip.usbChip(vendor: 0x13D3, product: 0x3568) == 0x7922)
        #expect(MediaTekChip.usbChip(vendor: 0x0E8D, product: 0x0616) == 0x7922)
        #expect(MediaTekChip.usbChip(vendor: 0x0489, product: 0xE113) == 0x7925)
        #expect(MediaTekChip.usbChip(vendor: 0x0E8D, product: 0x1234) == 0, "MediaTek's own VID: the chip id decides")
        #expect(MediaTekChip.usbChip(vendor: 0x0BDA, product: 0x8771) == nil)
        var claim = USBClaim(vendor: 0x13D3, product: 0x3568)
        #expect(ChipsetTable.first(&claim) == 3 && claim.start == .fromReset)
        let model = ChipsetTable.usbModel(vendor: 0x0489, product: 0xE113)
        #expect(model.map { text($0.model) } == "MT7925")
        #expect(model.map { text($0.file) } == "mt7925/BT_RAM_CODE_MT7925_1_1_hdr.bin")
        #expect(model.map { "\($0.info.package)" } == "firmware-mediatek (component non-free-firmware)")
    }

    @Test func ramCodeCheck() {
        #expect(mediatekError(ramCode) == nil)
        #expect(ramCode.withRaw { try? MediaTekRAMCode.check($0) } == 2)
        #expect(mediatekError([]) == .fileTooShort)
        #expect(mediatekError(Array(ramCode.prefix(100))) == .fileTooShort)
        #expect(mediatekError(Array(ramCode.dropLast())) == .sectionOutside)
        var foreign = ramCode
        foreign[16] = UInt8(ascii: "X")
        #expect(mediatekError(foreign) == .foreignFile)
        var none = ramCode
        none[44] = 0
        #expect(mediatekError(none) == .badSectionCount)
        var many = ramCode
        many[44] = 33
        #expect(mediatekError(many) == .badSectionCount)
        var seven = ramCode
        seven[44] = 7
        #expect(mediatekError(seven) == .fileTooShort, "the section map runs past the end")
        var loadBeyondSize = ramCode
        loadBeyondSize[96 + 16] = 0x2D  // load 301 of a 300-byte section
        #expect(mediatekError(loadBeyondSize) == .sectionOutside)
        var farOffset = ramCode
        farOffset[96 + 4 + 3] = 0xFF
        #expect(mediatekError(farOffset) == .sectionOutside)
    }

    /// A MediaTek dongle over USB, through the register reads to `.needsFiles`.
    func usbDriver(_ o: inout RecordingObserver, id: UInt32 = 0x7961, version: UInt32 = 1) -> TestDriver<VendorSetup> {
        var context = ChipsetContext()
        (context.overUSB, context.usbVendor, context.usbProduct) = (true, 0x13D3, 0x3563)
        let plan = VendorSetup.plan(for: &context, probe: false)
        #expect(plan == .fromReset(3))
        var d = makeDriver(VendorSetup(plan: plan, context: context))
        d.start(now: 0)
        #expect(drain(&d) == [registerRead(0x8000_0008)])
        deliver(&d, registerAnswer(0), now: 1, &o)
        #expect(drain(&d) == [registerRead(0x7001_0200)])
        deliver(&d, registerAnswer(id), now: 2, &o)
        guard MediaTekChip.name(id: id) != nil else { return d }
        #expect(drain(&d) == [registerRead(0x8002_1004)])
        deliver(&d, registerAnswer(version), now: 3, &o)
        #expect(drain(&d) == [registerRead(0x7001_0020)])
        deliver(&d, registerAnswer(0), now: 4, &o)
        return d
    }

    @Test func ramCodeDownloadThenBluetoothOn() {
        var o = RecordingObserver()
        var d = usbDriver(&o)
        #expect(d.state == .needsFiles && d.setup.active == 3)
        var request = FileRequest()
        d.setup.table.mediatek.files(&request)
        #expect(text(request.firmware) == "BT_RAM_CODE_MT7961_1_2_hdr.bin")
        var sent: [[UInt8]] = []
        ramCode.withRaw { file in
            d.provideFiles(firmware: file, companion: UnsafeRawBufferPointer(start: nil, count: 0), now: 10)
            // The status query: flag 0, a zero, the section map's 52 bytes from byte 12.
            let query = drain(&d)
            #expect(query == [hex("01 6f fc 3a 01 01 36 00 00 00") + Array(ramCode[108..<160])])
            deliver(&d, wmtAnswer(0x01, flag: 0), now: 11, &o)
            sent += drain(&d)
            deliver(&d, wmtAnswer(0x01), now: 12, &o)
            sent += drain(&d)
            deliver(&d, wmtAnswer(0x01), now: 13, &o)
        }
        #expect(sent == [hex("01 6f fc ff 01 01 fb 00 01") + Array(ramCode[224..<474]),
                         hex("01 6f fc 37 01 01 33 00 03") + Array(ramCode[474..<524])])
        // The second section has nothing to load: 100 ms for the activation.
        #expect(drain(&d).isEmpty)
        #expect(d.nextDeadline() == 113)
        _ = d.check(now: 113)
        #expect(drain(&d) == [hex("01 6f fc 0e 01 08 0a 00 01 01 90 18 01 74 01 00 01 00")])
        deliver(&d, registerAnswer(0), now: 114, &o)
        #expect(drain(&d) == [hex("01 6f fc 06 01 06 02 00 00 01")])
        deliver(&d, wmtAnswer(0x06, [0x04, 0x04]), now: 115, &o)
        #expect(drain(&d) == [hciReset], "the host's own bring-up follows")
        #expect(d.setup.table.mediatek.loader.phase == .done && d.setup.table.mediatek.loader.sectionsLoaded == 1)
        #expect(d.setup.describe().map { text($0.summary) } == "RAM code loaded (1 of 2 sections, 2 WMT commands); Bluetooth on")
        #expect(d.setup.describe().map { text($0.label) } == "MediaTek MT7921")
    }

    @Test func aWarmChipKeepsItsRAMCode() {
        var o = RecordingObserver()
        var d = usbDriver(&o, id: 0x7922, version: 0)
        ramCode.withRaw { file in
            d.provideFiles(firmware: file, companion: UnsafeRawBufferPointer(start: nil, count: 0), now: 10)
            _ = drain(&d)
            deliver(&d, wmtAnswer(0x01, flag: 2), now: 11, &o)
        }
        #expect(drain(&d).isEmpty, "no section sent")
        _ = d.check(now: 111)
        _ = drain(&d)
        deliver(&d, registerAnswer(0), now: 112, &o)
        _ = drain(&d)
        deliver(&d, wmtAnswer(0x06, [0x04, 0x04]), now: 113, &o)
        #expect(d.setup.table.mediatek.loader.phase == .done && d.setup.table.mediatek.loader.sectionsLoaded == 0)
        #expect(d.setup.describe()?.summaryLevel == .debug)
    }

    @Test func aBusySectionIsAskedAgainAfter100ms() {
        var o = RecordingObserver()
        var d = usbDriver(&o)
        ramCode.withRaw { file in
            d.provideFiles(firmware: file, companion: UnsafeRawBufferPointer(start: nil, count: 0), now: 10)
            let query = drain(&d)
            deliver(&d, wmtAnswer(0x01, flag: 1), now: 11, &o)
            #expect(drain(&d).isEmpty)
            _ = d.check(now: 111)
            #expect(drain(&d) == query)
        }
    }

    /// Over USB an empty answer read ("nothing yet") is asked again only after
    /// the chip's gap (btmtk_usb_wmt_recv: 500 µs), on the driver's deadline: 2 ms
    /// of the core's whole-millisecond clock, never less; the answer then goes on.
    @Test func anEmptyAnswerReadIsAskedAgainAfterTheChipsGap() {
        var o = RecordingObserver()
        var d = usbDriver(&o)
        let nothingYet = hex("e4 00"), answerRead = hex("01 6f fc 00")
        #expect(nothingYet.withRaw { USBVendorControl.isNothingYet($0) } && answerRead.withRaw { USBVendorControl.isAnswerRead($0) })
        // The pause: the gap in whole ms rounded up, and 1 more for a clock read rounded down.
        #expect(USBVendorControl.answerReaskPause == UInt64((USBVendorControl.answerReaskGap + 999) / 1000) + 1)
        #expect(USBVendorControl.answerReaskPause == 2 && USBVendorControl.answerReaskGap == 500)
        ramCode.withRaw { file in
            d.provideFiles(firmware: file, companion: UnsafeRawBufferPointer(start: nil, count: 0), now: 10)
            _ = drain(&d)
            deliver(&d, nothingYet, now: 20, &o)
            #expect(drain(&d).isEmpty, "not asked again at once")
            #expect(d.nextDeadline() == 22)
            _ = d.check(now: 21)
            #expect(drain(&d).isEmpty, "1 ms on the core's clock may be a few µs: not yet")
            _ = d.check(now: 22)
            #expect(drain(&d) == [answerRead])
            deliver(&d, nothingYet, now: 23, &o)
            _ = d.check(now: 25)
            #expect(drain(&d) == [answerRead])
            // The answer came: the section's first chunk, as without the empty reads.
            deliver(&d, wmtAnswer(0x01, flag: 0), now: 26, &o)
            #expect(drain(&d).first.map { Array($0.prefix(9)) } == hex("01 6f fc ff 01 01 fb 00 01"))
        }
        #expect(d.setup.table.mediatek.loader.reasks == 2)
        // The re-ask is no WMT command Linux would send as HCI: USB only, and no register request.
        #expect(answerRead.withRaw { !USBVendorControl.answeredThroughControl($0) && USBVendorControl.registerRequest($0) == nil })
    }

    /// A chip whose answer reads stay empty ends the set-up after the answer's 5 s, with its own line.
    @Test func answerReadsThatStayEmptyFailTheSetUp() {
        var o = RecordingObserver()
        var d = usbDriver(&o)
        var now: UInt64 = 20
        var reads = 0
        ramCode.withRaw { file in
            d.provideFiles(firmware: file, companion: UnsafeRawBufferPointer(start: nil, count: 0), now: 10)
            _ = drain(&d)
            while d.state == .settingUp, reads <= MediaTekLoader.emptyReadLimit {
                deliver(&d, hex("e4 00"), now: now, &o)
                reads += 1
                now += USBVendorControl.answerReaskPause
                _ = d.check(now: now)
                _ = drain(&d)
            }
        }
        #expect(reads == MediaTekLoader.emptyReadLimit + 1)
        #expect(UInt64(MediaTekLoader.emptyReadLimit) * USBVendorControl.answerReaskPause == 5_000, "the answer timeout's 5 s")
        #expect(d.state == .finished(.setupFailed))
        #expect(d.setup.table.mediatek.loader.error == .answerNeverCame)
    }

    /// Malformed answers end the set-up with the error the failure line names.
    @Test func malformedAnswersFailTheSetUp() {
        func failure(_ answer: [UInt8], afterQuery: Bool = true) -> MediaTekError? {
            var o = RecordingObserver()
            var d = usbDriver(&o)
            return ramCode.withRaw { file in
                d.provideFiles(firmware: file, companion: UnsafeRawBufferPointer(start: nil, count: 0), now: 10)
                _ = drain(&d)
                deliver(&d, answer, now: 11, &o)
                guard d.check(now: 11) == .finished(.setupFailed) else { return nil }
                return d.setup.table.mediatek.loader.error
            }
        }
        #expect(failure(wmtAnswer(0x06, flag: 0)) == .wrongOperation)
        #expect(failure(hex("e4 03 02 01 01")) == .shortAnswer)
        // Command Complete for 0xFC6F is flow control, not the answer.
        #expect(failure(commandComplete(0xFC6F)) == nil)

        var o = RecordingObserver()
        var context = ChipsetContext()
        (context.overUSB, context.usbVendor, context.usbProduct) = (true, 0x0E8D, 0x0608)
        var refused = makeDriver(VendorSetup(plan: .fromReset(3), context: context))
        refused.start(now: 0)
        _ = drain(&refused)
        deliver(&refused, registerAnswer(0, status: 1), now: 3, &o)
        #expect(refused.check(now: 3) == .finished(.setupFailed) && refused.setup.table.mediatek.loader.error == .registerFailed)
        var other = usbDriver(&o, id: 0x7663)
        #expect(other.check(now: 3) == .finished(.setupFailed) && other.setup.table.mediatek.loader.error == .unsupportedChip)
        var shortRegister = usbDriver(&o)
        ramCode.withRaw { file in
            shortRegister.provideFiles(firmware: file, companion: UnsafeRawBufferPointer(start: nil, count: 0), now: 10)
        }
        #expect(text(shortRegister.setup.describe()!.label) == "MediaTek MT7921")
        var foreign = usbDriver(&o)
        [UInt8](repeating: 0, count: 200).withRaw { file in
            foreign.provideFiles(firmware: file, companion: UnsafeRawBufferPointer(start: nil, count: 0), now: 10)
        }
        #expect(foreign.check(now: 10) == .finished(.setupFailed) && foreign.setup.table.mediatek.loader.error == .foreignFile)
    }

    /// A section status above 2 is "undone" in btmtk.c (`btmtk_usb_hci_wmt_sync`): the section is downloaded.
    @Test func aSectionStatusAbove2IsDownloaded() {
        for status: UInt8 in [3, 5, 0xFF] {
            var o = RecordingObserver()
            var d = usbDriver(&o)
            ramCode.withRaw { file in
                d.provideFiles(firmware: file, companion: UnsafeRawBufferPointer(start: nil, count: 0), now: 10)
                _ = drain(&d)
                deliver(&d, wmtAnswer(0x01, flag: status), now: 11, &o)
                #expect(drain(&d) == [hex("01 6f fc ff 01 01 fb 00 01") + Array(ramCode[224..<474])], "status \(status)")
                #expect(d.state == .settingUp)
            }
        }
    }

    /// A clean stop turns Bluetooth off (Linux `btmtk_usb_shutdown`: WMT function
    /// control 0) after the host's stop and before the board releases the chip.
    @Test func aCleanStopTurnsBluetoothOff() {
        func running(_ o: inout RecordingObserver) -> TestDriver<VendorSetup> {
            var d = usbDriver(&o, id: 0x7922, version: 0)
            ramCode.withRaw { file in
                d.provideFiles(firmware: file, companion: UnsafeRawBufferPointer(start: nil, count: 0), now: 10)
                _ = drain(&d)
                deliver(&d, wmtAnswer(0x01, flag: 2), now: 11, &o)
            }
            _ = d.check(now: 111)
            _ = drain(&d)
            deliver(&d, registerAnswer(0), now: 112, &o)
            _ = drain(&d)
            deliver(&d, wmtAnswer(0x06, [0x04, 0x04]), now: 113, &o)
            #expect(drain(&d) == [hciReset])
            return d
        }
        var o = RecordingObserver()
        var d = running(&o)
        d.stop(now: 200)
        #expect(d.check(now: 200) == .settingUp, "the set-up's shutdown step runs")
        #expect(drain(&d) == [hex("01 6f fc 06 01 06 02 00 00 00")])
        #expect(d.check(now: 201) == .settingUp)
        deliver(&d, wmtAnswer(0x06, [0x04, 0x04]), now: 202, &o)
        #expect(d.check(now: 202) == .finished(.stopped))
        #expect(d.setup.table.mediatek.loader.phase == .off)
        // Unanswered: the stop ends all the same, 500 ms later.
        var silent = running(&o)
        silent.stop(now: 200)
        _ = silent.check(now: 200)
        #expect(drain(&silent).count == 1)
        #expect(silent.nextDeadline() == 700)
        #expect(silent.check(now: 700) == .finished(.stopped))
        // A stop during the set-up: Bluetooth was never turned on, nothing is sent.
        var early = usbDriver(&o)
        early.stop(now: 10)
        #expect(early.check(now: 10) == .finished(.stopped) && drain(&early).isEmpty)
    }

    /// A chip that stopped answering (`resetFirst`): Linux's subsystem reset for its
    /// id, the reset-done poll, the chip id, then the board's USB port reset
    /// (`btusb_mtk_reset`'s `usb_queue_reset_device`); the download comes in the
    /// fresh set-up after the re-enumeration.
    @Test func theSubsystemResetAsBtmtkRunsIt() {
        func uhwRead(_ address: UInt32) -> [UInt8] { hex("01 6f fc 0a 01 08 06 00 01 02") + le32(address) }
        func uhwWrite(_ address: UInt32, _ value: UInt32) -> [UInt8] { hex("01 6f fc 0e 01 08 0a 00 01 01") + le32(address) + le32(value) }
        /// Answers each command (`reads`: the values of the UHW reads in order, else 0), following pauses; the commands.
        func run(id: UInt32, reads: [UInt32]) -> (sent: [[UInt8]], loader: MediaTekLoader, end: DriverState, rung: RecoveryRung?) {
            var o = RecordingObserver()
            var context = ChipsetContext()
            (context.overUSB, context.usbVendor, context.usbProduct, context.resetFirst) = (true, 0x13D3, 0x3563, true)
            var d = makeDriver(VendorSetup(plan: .fromReset(3), context: context))
            d.start(now: 0)
            var sent: [[UInt8]] = [], now: UInt64 = 0, values = reads[...]
            for _ in 0..<200 {
                let out = drain(&d)
                sent += out
                if out.isEmpty {
                    guard let next = d.nextDeadline() else { break }
                    now = next
                    _ = d.check(now: now)
                    continue
                }
                let command = out[0]
                let value: UInt32 = switch (command[8], command[9], Array(command[10..<14])) {
                case (0, 2, le32(0x7001_0200)): id
                case (1, 2, _): values.popFirst() ?? 0
                default: 0
                }
                now += 1
                deliver(&d, registerAnswer(value), now: now, &o)
                if d.check(now: now) != .settingUp { break }
            }
            return (sent, d.setup.table.mediatek.loader, d.state, d.recoveryRung)
        }
        let mt7921 = run(id: 0x7961, reads: [0, 0, 0, 0, 0, 0x100])
        let R = MediaTekRegister.self
        #expect(mt7921.sent == [registerRead(0x8000_0008), registerRead(0x7001_0200),
                                uhwWrite(R.endpointResetOption, 0x0001_0001), uhwRead(R.watchdogStatus), uhwWrite(R.subsystemReset, 1),
                                uhwWrite(R.udmaInterrupt, 0xFF), uhwRead(R.udmaInterrupt), uhwWrite(R.udmaInterrupt1, 0xFF),
                                uhwRead(R.udmaInterrupt1), uhwWrite(R.subsystemReset, 0), uhwRead(R.subsystemReset),
                                uhwRead(R.misc), uhwRead(R.misc),
                                registerRead(0x7001_0200)])
        #expect(mt7921.loader.phase == .portReset && mt7921.loader.resetConfirmed)
        #expect(mt7921.end == .finished(.portResetWanted) && mt7921.rung == .portReset, "the port reset next, on the ladder's rung")
        // MT7922: the read values are kept, the reset bits set on them; the UDMA status cleared after the poll.
        let mt7922 = run(id: 0x7922, reads: [0x4000_0000, 0x4000_2020, 0x100])
        #expect(Array(mt7922.sent[2...9]) == [uhwRead(R.subsystemReset), uhwWrite(R.subsystemReset, 0x4000_2020),
                                              uhwWrite(R.endpointResetOption, 0x0001_0001), uhwRead(R.subsystemReset),
                                              uhwWrite(R.subsystemReset, 0x4000_2021), uhwRead(R.misc),
                                              uhwWrite(R.udmaInterrupt, 0xFF), registerRead(0x7001_0200)])
        // MT7925: bits 8-15 cleared before bit 13 is set. A chip that never says done: 50 polls, then on.
        let mt7925 = run(id: 0x7925, reads: [0, 0x0000_FF20])
        #expect(mt7925.sent[5] == uhwWrite(R.resetConnV3, 0x0000_2020))
        #expect(mt7925.sent.filter { $0 == uhwRead(R.misc) }.count == 50 && !mt7925.loader.resetConfirmed)
        #expect(mt7925.loader.phase == .portReset && mt7925.end == .finished(.portResetWanted))
    }

    /// The set-up's log line says the reset was run, and whether the chip confirmed it (Linux: "Reset timeout").
    @Test func theSummaryNamesTheSubsystemReset() {
        func summary(resetDone: UInt32) -> (String?, SummaryLevel?) {
            var o = RecordingObserver()
            var context = ChipsetContext()
            (context.overUSB, context.usbVendor, context.usbProduct, context.resetFirst) = (true, 0x13D3, 0x3568, true)
            var d = makeDriver(VendorSetup(plan: .fromReset(3), context: context))
            d.start(now: 0)
            var now: UInt64 = 0
            for _ in 0..<200 {
                let out = drain(&d)
                if out.isEmpty {
                    guard let next = d.nextDeadline() else { break }
                    now = next
                    _ = d.check(now: now)
                    continue
                }
                let address = Array(out[0][10..<14])
                now += 1
                deliver(&d, registerAnswer(address == le32(0x7001_0200) ? 0x7922 : address == le32(0x7000_2510) ? resetDone : 0),
                        now: now, &o)
                if d.check(now: now) != .settingUp { break }
            }
            return (d.setup.describe().map { text($0.summary) }, d.setup.describe()?.summaryLevel)
        }
        let confirmed = summary(resetDone: 0x100)
        #expect(confirmed.0 == "subsystem reset done" && confirmed.1 == .info)
        let unconfirmed = summary(resetDone: 0)
        #expect(unconfirmed.0 == "subsystem reset (not confirmed within 1 s)")
    }

    /// Over USB the board sends the register commands as the vendor requests btmtk.c sends.
    @Test func registerCommandsAsUSBVendorRequests() {
        func request(_ packet: [UInt8]) -> USBControlRequest? { packet.withRaw { USBVendorControl.registerRequest($0) } }
        #expect(request(registerRead(0x7001_0200)) == USBControlRequest(requestType: 0xC0, request: 0x63, value: 0x7001, index: 0x0200, length: 4, data: 0))
        let endpointReset = hex("01 6f fc 0e 01 08 0a 00 01 01 90 18 01 74 01 00 01 00")
        #expect(request(endpointReset) == USBControlRequest(requestType: 0x5E, request: 0x02, value: 0x7401, index: 0x1890, length: 4, data: 0x0001_0001))
        #expect(request(hex("01 6f fc 0a 01 08 06 00 01 02 10 25 00 70")) == USBControlRequest(requestType: 0xDE, request: 0x01, value: 0x7000, index: 0x2510, length: 4, data: 0))
        #expect(request(hex("01 6f fc 06 01 06 02 00 00 01")) == nil, "function control goes as HCI")
        #expect(hex("01 6f fc 06 01 06 02 00 00 01").withRaw { USBVendorControl.answeredThroughControl($0) })
        #expect(!hciReset.withRaw { USBVendorControl.answeredThroughControl($0) })
        var setup = [UInt8](repeating: 0, count: 12)
        #expect(setup.withUnsafeMutableBufferPointer { request(endpointReset)!.write(into: $0.baseAddress!) } == 12)
        #expect(setup == hex("5e 02 01 74 90 18 04 00 01 00 01 00"))
        #expect(setup.withUnsafeMutableBufferPointer { USBVendorControl.answerRequest.write(into: $0.baseAddress!) } == 8)
        #expect(Array(setup.prefix(8)) == hex("c0 01 30 00 00 00 40 00"))
        #expect(setup.withUnsafeMutableBufferPointer { USBVendorControl.registerAnswer(ok: true, value: 0x7961, into: $0.baseAddress!) } == 12)
        #expect(setup == registerAnswer(0x7961))
    }

    /// Over H4 (TCP, a UART) the probe's Read Local Version (MediaTek, 70) hands over; the register reads go as they are.
    @Test func overH4TheProbeHandsOver() {
        var o = RecordingObserver()
        var d = probedDriver(localVersion(manufacturer: 70, hciVersion: 0x0B, revision: 0x0000, subversion: 0x0000), &o)
        #expect(d.setup.active == 3)
        #expect(drain(&d) == [registerRead(0x8000_0008)])
        var usb = ChipsetContext()
        usb.overUSB = true
        #expect(!MediaTekChipset.recognises(localVersion(manufacturer: 70).withRaw { LocalVersion($0) }!, context: usb))
    }
}

func text(_ bytes: Capacity.ChipsetText) -> String { bytes.withBytes { String(decoding: $0, as: UTF8.self) } }
