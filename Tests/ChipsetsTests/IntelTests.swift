import Testing
import BLEHost
@testable import Chipsets
import TestSupport

/// Intel Read Version parsing, firmware names, `.sfi` checks and the loader's
/// command sequence, on hand-built files: every malformed file is an IntelError
/// before anything is sent, never a crash.
@Suite struct IntelTests {
    static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
    static func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16 & 0xFFFF) }

    static func complete(_ opcode: UInt16, _ params: [UInt8]) -> [UInt8] {
        [HCIEventCode.commandComplete, UInt8(3 + params.count), 1] + le16(Int(opcode)) + params
    }

    /// TLV Read Version of an AX210 boot loader (values as the chip reports them).
    static func tlvVersion(imageType: UInt8 = 0x01, engine: UInt8 = 0x00, variant: Int = 0x17) -> [UInt8] {
        var rp: [UInt8] = [0x00]
        rp += [0x10, 4] + le32(0x0000_0410)          // CNVI TOP
        rp += [0x11, 4] + le32(0x0000_0410)          // CNVR TOP
        rp += [0x12, 4] + le32(variant << 16 | 0x37 << 8)  // CNVI BT: platform 0x37, variant
        rp += [0x16, 2] + le16(0)
        rp += [0x1C, 1, imageType]
        rp += [0x2E, 1, 0x00]                        // limited CCE: no
        rp += [0x2F, 1, engine]
        rp += [0x30, 6, 1, 2, 3, 4, 5, 6]
        return rp
    }

    /// Legacy Read Version: status, platform, variant, hw rev, fw variant, fw rev, build …
    static func legacyVersion(variant: UInt8, hwRevision: UInt8, fwVariant: UInt8 = 0x06, fwRevision: UInt8) -> [UInt8] {
        [0x00, 0x37, variant, hwRevision, fwVariant, fwRevision, 0x01, 0x02, 0x03, 0x00]
    }

    static func bootParams(devRevision: Int, limitedCCE: UInt8 = 0) -> [UInt8] {
        [0x00, 0, 0, 0] + le16(devRevision) + [1, 0, 0, 0, 0, 0] + [1, 2, 3, 4, 5, 6] + [0, 0, 0, limitedCCE, 0]
    }

    /// An `.sfi` with both headers (TLV layout) and a payload of commands:
    /// Write Boot Params (boot address 0x00012345) and NOP padding to 4-byte groups.
    static func sfi(tlv: Bool = true, payloadCommands: Int = 200) -> [UInt8] {
        var file = [UInt8](repeating: 0xA5, count: tlv ? 964 : 644)
        file.replaceSubrange(8..<12, with: le32(0x0001_0000))
        if tlv {
            file[644] = 0x06
            file.replaceSubrange(652..<656, with: le32(0x0002_0000))
        }
        // Write Boot Params: 3 + 9 = 12 bytes (a group of its own).
        file += le16(0xFC0E) + [9] + le32(0x0001_2345) + [7, 8, 9, 0, 0]
        for i in 0..<payloadCommands {
            // 3 + 61 = 64 bytes: one group each; every 7th a pair (3+1)+(3+5)=12.
            if i % 7 == 0 {
                file += le16(0xFC02) + [1, 0] + le16(0xFC02) + [5, 1, 2, 3, 4, 5]
            } else {
                file += le16(0xFC02) + [61] + [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: 61)
            }
        }
        return file
    }

    /// Where each command of `sfi(tlv: true, payloadCommands:)`'s payload ends:
    /// Write Boot Params (12 bytes), then 4 + 8 for every 7th and 64 for the others.
    static func sfiCommandEnds(payloadCommands: Int = 200) -> Set<Int> {
        var ends: Set<Int> = []
        var at = 964 + 12
        ends.insert(at)
        for i in 0..<payloadCommands {
            for size in i % 7 == 0 ? [4, 8] : [64] {
                at += size
                ends.insert(at)
            }
        }
        return ends
    }

    func version(_ rp: [UInt8]) -> IntelVersion? { rp.withRaw { IntelVersion.parse($0) } }

    func baseName(_ v: IntelVersion) -> String {
        var out = FixedBytes<128>()
        v.writeBaseName(into: &out)
        return out.withBytes { String(decoding: $0, as: UTF8.self) }
    }

    @Test func test_intel_read_version_and_file_names() throws {
        let ax210 = try #require(version(Self.tlvVersion()))
        #expect(ax210.generation == .tlv && ax210.variant == 0x17 && ax210.inBootloader && ax210.isSupported)
        #expect(ax210.name.description == "AX210" && baseName(ax210) == "ibt-0041-0041")
        #expect(ax210.secureBootEngine == 0)
        // Operational firmware, an intermediate loader, another platform, a truncated record.
        #expect(version(Self.tlvVersion(imageType: 0x03))?.inBootloader == false)
        #expect(version(Self.tlvVersion(imageType: 0x02))?.intermediate == true)
        var other = Self.tlvVersion()
        other[3 + 4 + 2 + 4 + 2 + 1] = 0x38
        #expect(version(other) == nil)
        #expect(version(Array(Self.tlvVersion().dropLast(3))) == nil)
        #expect(version([0x01]) == nil && version([]) == nil)

        var v8265 = try #require(version(Self.legacyVersion(variant: 0x0C, hwRevision: 0x00, fwRevision: 0x70)))
        #expect(v8265.generation == .legacy && v8265.inBootloader && v8265.name.description == "8265")
        #expect(Self.bootParams(devRevision: 16).withRaw { v8265.applyBootParams($0) })
        #expect(baseName(v8265) == "ibt-12-16")
        let v9560 = try #require(version(Self.legacyVersion(variant: 0x11, hwRevision: 16, fwRevision: 1)))
        #expect(baseName(v9560) == "ibt-17-16-1")
        let ax200 = try #require(version(Self.legacyVersion(variant: 0x14, hwRevision: 1, fwRevision: 3)))
        #expect(baseName(ax200) == "ibt-20-1-3" && ax200.name.description == "AX200")
        let ax201 = try #require(version(Self.legacyVersion(variant: 0x13, hwRevision: 0, fwRevision: 4)))
        #expect(baseName(ax201) == "ibt-19-0-4" && ax201.name.description == "AX201")
        #expect(version(Self.legacyVersion(variant: 0x12, hwRevision: 0, fwVariant: 0x23, fwRevision: 0))?.inBootloader == false)
        #expect(version(Self.legacyVersion(variant: 0x12, hwRevision: 0, fwVariant: 0x99, fwRevision: 0)) == nil)
        // CNVx TOP: type (bits 0…11) and step (bits 24…27) packed as Linux and Bumble name files.
        #expect(IntelVersion.packCNV(0x0000_0400) == 0x0040 && IntelVersion.packCNV(0x0000_0410) == 0x0041)
        #expect(IntelVersion.packCNV(0x0100_0400) == 0x0140)
        #expect(IntelUSB.isKnown(vendor: 0x8087, product: 0x0032) && !IntelUSB.isKnown(vendor: 0x8087, product: 0x0001))
    }

    /// A TLV Read Version with the records Linux names a file from: CNVi/CNVr TOP,
    /// CNVi BT (platform 0x37, the variant), the image type and, when given, the
    /// firmware id record (0x50) with exactly these value bytes.
    static func namingVersion(cnviTop: Int, cnvrTop: Int, variant: Int, imageType: UInt8, fwID: [UInt8]? = nil) -> [UInt8] {
        var rp: [UInt8] = [0x00]
        rp += [0x10, 4] + le32(cnviTop) + [0x11, 4] + le32(cnvrTop)
        rp += [0x12, 4] + le32(variant << 16 | 0x37 << 8)
        rp += [0x1C, 1, imageType]
        if let fwID { rp += [0x50, UInt8(fwID.count)] + fwID }
        rp += [0x2E, 1, 0x00, 0x2F, 1, 0x01]
        return rp
    }

    /// Linux `btintel_get_fw_name_tlv` (v6.12: the rule `INTEL_HW_VARIANT(cnvi_bt) >= 0x1e`
    /// since "Bluetooth: btintel: Fix the sfi name for BlazarU", 2024): the TLV bytes a chip
    /// reports and the name Linux asks `request_firmware` for, without `intel/` and suffix.
    /// BlazarI (CNVi TOP type 0x900, step 1: 0190) with CNVr 0041 or 0291 is what
    /// Debian 13's firmware-iwlwifi 20250410-2 ships `-iml`, `-usb` and `-pci` files for.
    @Test func test_intel_file_names_from_variant_0x1e_as_linux_names_them() throws {
        let usb: [UInt8] = Array("usb".utf8) + [0]
        let vectors: [(rp: [UInt8], name: String)] = [
            // BlazarI boot loader: the intermediate loader, whatever the firmware id.
            (Self.namingVersion(cnviTop: 0x0100_0900, cnvrTop: 0x0000_0410, variant: 0x1E, imageType: 1), "ibt-0190-0041-iml"),
            (Self.namingVersion(cnviTop: 0x0100_0900, cnvrTop: 0x0200_0910, variant: 0x1E, imageType: 1, fwID: usb), "ibt-0190-0291-iml"),
            // The intermediate loader (image 2) and the operational image (3) with a firmware id.
            (Self.namingVersion(cnviTop: 0x0100_0900, cnvrTop: 0x0000_0410, variant: 0x1E, imageType: 2, fwID: usb), "ibt-0190-0041-usb"),
            (Self.namingVersion(cnviTop: 0x0100_0900, cnvrTop: 0x0000_0410, variant: 0x1E, imageType: 3,
                                fwID: Array("pci".utf8) + [0]), "ibt-0190-0041-pci"),
            // No firmware id record, or an empty one: the plain name (Linux's fallback).
            (Self.namingVersion(cnviTop: 0x0100_0900, cnvrTop: 0x0000_0410, variant: 0x1E, imageType: 2), "ibt-0190-0041"),
            (Self.namingVersion(cnviTop: 0x0100_0900, cnvrTop: 0x0000_0410, variant: 0x1E, imageType: 2, fwID: [0, 0x41]), "ibt-0190-0041"),
            // A later variant follows the same rule (>= 0x1e).
            (Self.namingVersion(cnviTop: 0x0100_0900, cnvrTop: 0x0000_0410, variant: 0x1F, imageType: 1), "ibt-0190-0041-iml"),
            // Below 0x1e the firmware id and the image type change nothing: Gale Peak (BE200,
            // 0x1c, CNVi 0x910 step 2) is the plain ibt-0291-0291 (the BlazarU fix's case).
            (Self.namingVersion(cnviTop: 0x0200_0910, cnvrTop: 0x0200_0910, variant: 0x1C, imageType: 1, fwID: usb), "ibt-0291-0291"),
            (Self.namingVersion(cnviTop: 0x0000_0930, cnvrTop: 0x0000_0410, variant: 0x1D, imageType: 1, fwID: usb), "ibt-0093-0041"),
            (Self.namingVersion(cnviTop: 0x0000_0410, cnvrTop: 0x0000_0410, variant: 0x17, imageType: 1), "ibt-0041-0041"),
        ]
        for (rp, name) in vectors {
            let v = try #require(version(rp))
            #expect(baseName(v) == name, "\(rp)")
        }
        // The firmware id: up to its NUL or its record's end (Linux reads on past a
        // record without a NUL; a well-formed chip ends it with one), at most 63 bytes
        // (Linux's fw_id[64] with its NUL).
        let noNUL = try #require(version(Self.namingVersion(cnviTop: 0x0100_0900, cnvrTop: 0x0000_0410, variant: 0x1E,
                                                             imageType: 2, fwID: Array("usb".utf8))))
        #expect(baseName(noNUL) == "ibt-0190-0041-usb" && noNUL.imageType == 2 && noNUL.bootsIntermediateLoader)
        let long = try #require(version(Self.namingVersion(cnviTop: 0x0100_0900, cnvrTop: 0x0000_0410, variant: 0x1E,
                                                            imageType: 3, fwID: [UInt8](repeating: 0x61, count: 80))))
        #expect(baseName(long) == "ibt-0190-0041-" + String(repeating: "a", count: 63))
        // A truncated firmware id record makes the whole answer malformed, as any record.
        var cut = Self.namingVersion(cnviTop: 0x0100_0900, cnvrTop: 0x0000_0410, variant: 0x1E, imageType: 2)
        cut += [0x50, 8, 0x75]
        #expect(version(cut) == nil)
    }

    /// A boot loader of variant 0x1e: Linux boots the intermediate loader first; this
    /// loader refuses before asking for a file, and says which file the chip needs.
    @Test func test_intel_variant_0x1e_boot_loader_is_refused_naming_its_file() {
        let blazar = Self.namingVersion(cnviTop: 0x0100_0900, cnvrTop: 0x0000_0410, variant: 0x1E, imageType: 1)
        let result = run(version: blazar, file: Self.sfi(), ddc: [])
        #expect(result.step == .failed(.intermediateLoaderStep))
        #expect(!result.sent.contains { $0[1] == 0x09 && $0[2] == 0xFC }, "nothing sent to the boot loader")
        func detail(_ rp: [UInt8]) -> String {
            var driver = IntelChipset()
            var packet = Capacity.HCIPacket()
            _ = driver.start(context: ChipsetContext(), into: &packet)
            _ = Self.complete(HCIOpcode.reset, [0x01]).withRaw { driver.handle(event: $0, into: &packet) }
            _ = Self.complete(IntelOpcode.readVersion, rp).withRaw { driver.handle(event: $0, into: &packet) }
            var out = Capacity.ChipsetText()
            driver.writeFailureDetail(into: &out)
            return String(decoding: driver.failure.bytes, as: UTF8.self) + ": " + out.withBytes { String(decoding: $0, as: UTF8.self) }
        }
        #expect(detail(blazar) == "this chip boots an intermediate loader before its firmware, a step not supported yet: "
                + "it needs intel/ibt-0190-0041-iml.sfi first, then the firmware file that loader names")
        // Found running its intermediate loader: the file Linux would load from there.
        let iml = Self.namingVersion(cnviTop: 0x0100_0900, cnvrTop: 0x0000_0410, variant: 0x1E, imageType: 2,
                                     fwID: Array("usb".utf8) + [0])
        #expect(detail(iml) == "controller is in its intermediate loader (not supported): Linux loads intel/ibt-0190-0041-usb.sfi from there")
        // Other failures add nothing.
        #expect(detail(Self.tlvVersion(variant: 0x30)) == "hardware variant not supported: ")
    }

    func check(_ file: [UInt8], _ v: IntelVersion) -> Result<IntelFirmwareLayout, IntelError> {
        file.withRaw { raw in
            do throws(IntelError) { return .success(try IntelFirmwareLayout.check(raw, version: v)) } catch { return .failure(error) }
        }
    }

    @Test func test_intel_sfi_checks() throws {
        let v = try #require(version(Self.tlvVersion()))
        let file = Self.sfi()
        let layout = try check(file, v).get()
        #expect(layout.payloadOffset == 964 && layout.bootAddress == 0x0001_2345)
        #expect(layout.sections[0] == (0, 128, 0) && layout.sections[1] == (128, 256, 3) && layout.sections[2] == (388, 256, 2))
        let ecdsa = try check(file, try #require(version(Self.tlvVersion(engine: 1)))).get()
        #expect(ecdsa.sections[0] == (644, 128, 0) && ecdsa.sections[2] == (868, 96, 2) && ecdsa.payloadOffset == 964)

        #expect(check(Array(file.prefix(900)), v) == .failure(.fileTooShort))
        #expect(check(Array(file.prefix(964)), v) == .failure(.emptyPayload))
        var badCSS = file
        badCSS[10] = 0x02
        #expect(check(badCSS, v) == .failure(.badCSSHeader))
        #expect(check(Array(file.dropLast(2)), v) == .failure(.commandOutOfBounds))
        #expect(check(file + [0x02, 0xFC, 0x00], v) == .failure(.unalignedEnd))
        var notVendor = file
        notVendor[965] = 0x0C  // the first command's opcode becomes 0x0C0E
        #expect(check(notVendor, v) == .failure(.notVendorCommand))
        var noBoot = file
        noBoot[964] = 0x02  // Write Boot Params becomes a NOP: no boot address anywhere
        #expect(check(noBoot, v) == .failure(.noBootAddress))
        var longer = file
        longer[966] = 10  // the first command's length grows by one: the walk goes wrong
        #expect(check(longer, v) != .success(layout))
        #expect(check([UInt8](repeating: 0, count: IntelFirmwareLayout.maximumFileSize + 1), v) == .failure(.fileTooLarge))

        // Every truncation: too short before the payload, empty at its start, whole
        // at the end of a command (every command here is a multiple of 4 bytes),
        // a command out of bounds anywhere else. Every single-byte corruption of
        // the payload: a layout or an error, never a crash.
        let ends = Self.sfiCommandEnds()
        #expect(ends.max() == file.count)
        for cut in Array(stride(from: 0, through: file.count, by: 7)) + [976, 980, 988, file.count] {
            let expected: Result<IntelFirmwareLayout, IntelError> =
                cut < 964 ? .failure(.fileTooShort)
                : cut == 964 ? .failure(.emptyPayload)
                : ends.contains(cut) ? .success(layout)
                : .failure(.commandOutOfBounds)
            #expect(check(Array(file.prefix(cut)), v) == expected, "cut at \(cut)")
        }
        for at in stride(from: 964, to: file.count, by: 13) {
            var corrupt = file
            corrupt[at] ^= 0xFF
            _ = check(corrupt, v)
        }
        #expect(([UInt8]([2, 1, 2, 3, 0x10, 0x00])).withRaw { try? IntelFirmwareLayout.checkDDC($0) } == nil)
        #expect(([UInt8]([2, 1, 2, 3, 0x10, 0x00, 0x01])).withRaw { try? IntelFirmwareLayout.checkDDC($0) } == 2)
    }

    /// Drives the loader as a boot loader would answer; returns the commands and the final step.
    func run(version rp: [UInt8], bootParams: [UInt8]? = nil, file: [UInt8], ddc: [UInt8], rejected: Bool = false)
        -> (sent: [[UInt8]], step: IntelLoader.Step, strayWhileVerifying: [IntelLoader.Step]) {
        var loader = IntelLoader()
        var packet = Capacity.HCIPacket()
        var sent: [[UInt8]] = []
        var stray: [IntelLoader.Step] = []
        func record() { sent.append(packet.withBytes { Array($0) }) }
        var step = loader.start(into: &packet)
        record()
        step = Self.complete(HCIOpcode.reset, [0x01]).withRaw { loader.handle(event: $0, into: &packet) }
        record()
        step = Self.complete(IntelOpcode.readVersion, rp).withRaw { loader.handle(event: $0, into: &packet) }
        if let bootParams, step == .send {
            record()
            step = Self.complete(IntelOpcode.readBootParams, bootParams).withRaw { loader.handle(event: $0, into: &packet) }
        }
        guard step == .needFiles else { return (sent, step, stray) }
        file.withRaw { fw in
            ddc.withRaw { dd in
                step = loader.provide(firmware: fw, ddc: dd, into: &packet)
                var rounds = 0
                while step == .send && rounds < 10_000 {
                    record()
                    rounds += 1
                    let opcode = UInt16(packet[1]) | UInt16(packet[2]) << 8
                    if opcode == IntelOpcode.reset {
                        step = ([0xFF, 7, 0x02, 0, 1, 0, 0, 0, 0] as [UInt8]).withRaw { loader.handle(event: $0, into: &packet) }
                        continue
                    }
                    step = Self.complete(opcode, [0]).withRaw { loader.handle(event: $0, into: &packet) }
                    if step == .wait && opcode == IntelOpcode.secureSend {
                        // A stray Command Complete while the download is verified (asserted by the caller).
                        stray.append(Self.complete(HCIOpcode.reset, [0]).withRaw { loader.handle(event: $0, into: &packet) })
                        let result: UInt8 = rejected ? 1 : 0
                        step = ([0xFF, 5, 0x06, result, 0x09, 0xFC, 0] as [UInt8]).withRaw { loader.handle(event: $0, into: &packet) }
                    }
                }
            }
        }
        return (sent, step, stray)
    }

    @Test func test_intel_loader_tlv_sequence() {
        let file = Self.sfi()
        let ddc: [UInt8] = [3, 0x01, 0x00, 0x07, 2, 0x02, 0x00]
        let (sent, step, stray) = run(version: Self.tlvVersion(), file: file, ddc: ddc)
        #expect(step == .done(loaded: true))
        // The Command Complete of a stray command changes nothing while the download is verified.
        #expect(stray == [.wait])
        let opcodes = sent.map { UInt16($0[1]) | UInt16($0[2]) << 8 }
        #expect(Array(opcodes.prefix(2)) == [0x0C03, 0xFC05] && sent[1] == [0x01, 0x05, 0xFC, 0x01, 0xFF])
        let sends = sent.filter { $0[1] == 0x09 && $0[2] == 0xFC }
        // Headers: CSS 128 (type 0), key 256 (type 3, 252 + 4), signature 256 (type 2, 252 + 4).
        #expect(sends.prefix(5).map { [$0[4], $0[3]] } == [[0, 129], [3, 253], [3, 5], [2, 253], [2, 5]])
        #expect(Array(sends[0][5...]) == Array(file[0..<128]))
        #expect(Array(sends[3][5...]) + Array(sends[4][5...]) == Array(file[388..<644]))
        // Data: groups of whole commands, each a multiple of 4 bytes, the file's bytes in order.
        let data = sends.dropFirst(5)
        #expect(data.allSatisfy { $0[4] == 1 && ($0.count - 5) <= 252 })
        #expect(data.flatMap { $0[5...] } == Array(file[964...]))
        #expect(Array(data.first![5...]).count == 12)
        // Then Intel Reset with the boot address, then the two DDC records.
        #expect(opcodes.suffix(3) == [0xFC01, 0xFC8B, 0xFC8B])
        #expect(sent[sent.count - 3] == [0x01, 0x01, 0xFC, 8, 0x00, 0x01, 0x00, 0x01, 0x45, 0x23, 0x01, 0x00])
        #expect(sent[sent.count - 2] == [0x01, 0x8B, 0xFC, 4, 3, 0x01, 0x00, 0x07])
        #expect(sent.last! == [0x01, 0x8B, 0xFC, 3, 2, 0x02, 0x00])
    }

    @Test func test_intel_loader_legacy_sequence() {
        let file = Self.sfi(tlv: false, payloadCommands: 20)
        let (sent, step, stray) = run(version: Self.legacyVersion(variant: 0x0C, hwRevision: 0, fwRevision: 0x70),
                                      bootParams: Self.bootParams(devRevision: 16), file: file, ddc: [])
        #expect(step == .done(loaded: true))
        #expect(stray == [.wait])
        let opcodes = sent.map { UInt16($0[1]) | UInt16($0[2]) << 8 }
        #expect(Array(opcodes.prefix(3)) == [0x0C03, 0xFC05, 0xFC0D] && opcodes.last == 0xFC01)
        let data = sent.filter { $0[1] == 0x09 && $0[2] == 0xFC && $0[4] == 1 }
        #expect(data.flatMap { $0[5...] } == Array(file[644...]))
        // 8265: boot address 0, as Linux sends it (the file's 0x00012345 is not used).
        #expect(sent.last! == [0x01, 0x01, 0xFC, 8, 0x00, 0x01, 0x00, 0x01, 0, 0, 0, 0])
    }

    @Test func test_intel_loader_operational_rejected_and_refusals() {
        // Already operational: nothing to load (TLV and legacy).
        #expect(run(version: Self.tlvVersion(imageType: 0x03), file: [], ddc: []).step == .done(loaded: false))
        #expect(run(version: Self.legacyVersion(variant: 0x14, hwRevision: 1, fwVariant: 0x23, fwRevision: 3),
                    file: [], ddc: []).step == .done(loaded: false))
        // Not Intel, unsupported variant, intermediate loader, limited CCE, a corrupt file.
        #expect(run(version: [0x01], file: [], ddc: []).step == .failed(.notIntel))
        #expect(run(version: Self.tlvVersion(variant: 0x30), file: [], ddc: []).step == .failed(.unsupportedVariant))
        #expect(run(version: Self.tlvVersion(imageType: 0x02), file: [], ddc: []).step == .failed(.intermediateLoader))
        #expect(run(version: Self.legacyVersion(variant: 0x0C, hwRevision: 0, fwRevision: 0), bootParams: Self.bootParams(devRevision: 16, limitedCCE: 1),
                    file: [], ddc: []).step == .failed(.limitedCCE))
        let truncated = run(version: Self.tlvVersion(), file: Array(Self.sfi().dropLast(5)), ddc: [])
        #expect(truncated.step == .failed(.commandOutOfBounds))
        #expect(!truncated.sent.contains { $0[1] == 0x09 && $0[2] == 0xFC })
        #expect(run(version: Self.tlvVersion(), file: Self.sfi(), ddc: [5, 1]).step == .failed(.badDDC))
        // The boot loader's secure boot check fails: no Intel Reset.
        let rejected = run(version: Self.tlvVersion(), file: Self.sfi(payloadCommands: 3), ddc: [], rejected: true)
        #expect(rejected.step == .failed(.downloadRejected))
        #expect(rejected.strayWhileVerifying == [.wait])
        #expect(!rejected.sent.contains { $0[1] == 0x01 && $0[2] == 0xFC })
    }
}
