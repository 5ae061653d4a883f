import Testing
import BLEHost
@testable import Chipsets
import TestSupport

/// Hand-built Realtek patch files: the parsers must answer every malformed
/// variant with a RealtekError, never a crash.
@Suite struct RealtekTests {
    static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
    static func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16 & 0xFFFF) }

    /// Epatch v1: "Realtech", version, count, chip ids, lengths, offsets, patches, extension.
    static func v1(version: Int = 0x0102_0304, patches: [(chip: Int, body: [UInt8])], project: UInt8 = 14) -> [UInt8] {
        var file = Array("Realtech".utf8) + le32(version) + le16(patches.count)
        var offset = 14 + 8 * patches.count
        var offsets: [Int] = []
        for p in patches { offsets.append(offset); offset += p.body.count }
        for p in patches { file += le16(p.chip) }
        for p in patches { file += le16(p.body.count) }
        for o in offsets { file += le32(o) }
        for p in patches { file += p.body }
        return file + [project, 0x01, 0x00, 0x51, 0x04, 0xFD, 0x77]
    }

    static let bodyA: [UInt8] = (0..<40).map { UInt8($0) }
    static let bodyB: [UInt8] = (0..<600).map { UInt8(truncatingIfNeeded: $0 * 7) }
    static let file = v1(patches: [(1, bodyA), (2, bodyB)])

    func parse(_ bytes: [UInt8], rom: UInt8 = 1, expected: UInt16? = 0x8761) -> Result<RealtekPayload, RealtekError> {
        bytes.withRaw { raw in
            do throws(RealtekError) {
                return .success(try RealtekPatchFile.parseV1(raw, romVersion: rom, expectedROM: expected))
            } catch { return .failure(error) }
        }
    }

    func error(_ bytes: [UInt8], rom: UInt8 = 1) -> RealtekError? {
        if case .failure(let e) = parse(bytes, rom: rom) { return e }
        return nil
    }

    @Test func test_realtek_chip_table() {
        #expect(RealtekChip.match(lmpSubversion: 0x8761, hciRevision: 0x0B, hciVersion: 0x0A) == .rtl8761bu)
        #expect(RealtekChip.match(lmpSubversion: 0x8723, hciRevision: 0x0D, hciVersion: 0x08) == .rtl8723d)
        #expect(RealtekChip.match(lmpSubversion: 0x8822, hciRevision: 0x0C, hciVersion: 0x0A) == .rtl8822c)
        #expect(RealtekChip.match(lmpSubversion: 0x8852, hciRevision: 0x0C, hciVersion: 0x0C) == .rtl8852c)
        #expect(RealtekChip.match(lmpSubversion: 0x8761, hciRevision: 0x0E, hciVersion: 0x0B) == .rtl8761cu)
        // A patched controller reports another subversion: nothing to load.
        #expect(RealtekChip.match(lmpSubversion: 0xDFC6, hciRevision: 0x0B, hciVersion: 0x0A) == nil)
        #expect(RealtekChip.isKnownUSB(vendor: 0x0BDA, product: 0x8771))
        #expect(RealtekChip.isKnownUSB(vendor: 0x2357, product: 0x0604))
        #expect(!RealtekChip.isKnownUSB(vendor: 0x0A12, product: 0x0001))
        #expect(RealtekChip.rtl8761bu.firmwareFile.description == "rtl8761bu_fw.bin")
        #expect(RealtekChip.rtl8822b.configRequired)
    }

    @Test func test_realtek_v1_selects_patch_by_rom_version() throws {
        let payload = try parse(Self.file, rom: 1).get()
        #expect(payload.bodyLength == Self.bodyB.count - 4)
        #expect(payload.trailer == 0x0102_0304 && payload.projectID == 14)
        let first = try parse(Self.file, rom: 0).get()
        #expect(first.bodyLength == Self.bodyA.count - 4)
        Self.file.withRaw { raw in
            let empty = UnsafeRawBufferPointer(start: nil, count: 0)
            let bytes = (0..<payload.totalLength).map { payload.byte(at: $0, file: raw, config: empty) }
            #expect(bytes == Array(Self.bodyB.dropLast(4)) + [0x04, 0x03, 0x02, 0x01])
        }
    }

    @Test func test_realtek_v1_errors() {
        #expect(error(Self.file, rom: 5) == .noPatchForROMVersion)
        #expect(error(Array("Realtech".utf8)) == .fileTooShort)
        #expect(error(Array("Real".utf8)) == .fileTooShort)
        #expect(error(Array("NotRealtekAtAll!!!!!!!!".utf8)) == .unknownSignature)
        var noExtension = Self.file; noExtension.removeLast()
        #expect(error(noExtension) == .missingExtensionSignature)
        #expect(error(Self.v1(patches: [(2, Self.bodyB)], project: 1)) == .projectMismatch)
        // A zero-length instruction in the extension.
        var badInstruction = Self.file
        badInstruction[badInstruction.count - 6] = 0; badInstruction[badInstruction.count - 5] = 0x07
        #expect(error(badInstruction) == .badExtensionInstruction)
        // End marker before the project id.
        var noProject = Self.file
        noProject[noProject.count - 5] = 0xFF
        #expect(error(noProject) == .projectIDNotFound)
        // Patch count far larger than the file.
        var hugeCount = Self.file
        hugeCount[12] = 0xFF; hugeCount[13] = 0xFF
        #expect(error(hugeCount) == .tableOutOfBounds)
        // Offset pointing past the end.
        var badOffset = Self.file
        badOffset[14 + 8 + 4 + 3] = 0x7F
        #expect(error(badOffset) == .patchOutOfBounds)
        // Length pointing past the end.
        var badLength = Self.file
        badLength[14 + 4 + 2 + 1] = 0xFF
        #expect(error(badLength) == .patchOutOfBounds)
        #expect(error(Self.v1(patches: [(2, [1, 2, 3])])) == .patchTooShort)
        let oversized = Self.v1(patches: [(2, [UInt8](repeating: 0, count: RealtekPatchFile.maximumFileSize))])
        #expect(error(oversized) == .fileTooLarge)
    }

    /// A v1 payload, if the file parses, is one stretch inside the file; an error is fine too.
    static func bodyInBounds(_ result: Result<RealtekPayload, RealtekError>, fileSize: Int) -> Bool {
        switch result {
        case .success(let p): p.start + p.bodyLength <= fileSize
        case .failure: true
        }
    }

    /// A v2 payload, if the file parses, has every segment inside `end`; an error is fine too.
    static func segmentsInBounds(_ result: Result<RealtekPayload, RealtekError>, end: Int) -> Bool {
        switch result {
        case .success(let p): (0..<p.segmentCount).allSatisfy { p.segment($0).start + p.segment($0).length <= end }
        case .failure: true
        }
    }

    @Test func test_realtek_v1_every_truncation_and_corruption_is_an_error_or_a_payload() {
        for n in 0..<Self.file.count {
            #expect(error(Array(Self.file.prefix(n))) != nil, "truncated to \(n) bytes")
        }
        for i in 0..<Self.file.count {
            for value: UInt8 in [0x00, 0xFF, 0x80] {
                var bytes = Self.file
                bytes[i] = value
                #expect(Self.bodyInBounds(parse(bytes), fileSize: bytes.count), "byte \(i) = \(value)")
            }
        }
    }

    /// Epatch v2: "RTBTCore", version (8), sections, then sections of sub-sections; a 7-byte tail.
    static func v2(sections: [(opcode: Int, subs: [(eco: UInt8, prio: UInt8, key: UInt8, body: [UInt8])])]) -> [UInt8] {
        var file = Array("RTBTCore".utf8) + le32(0x55) + le32(0) + le32(sections.count)
        for section in sections {
            var data = le16(section.subs.count) + [0, 0]
            for sub in section.subs { data += [sub.eco, sub.prio, sub.key, 0] + le32(sub.body.count) + sub.body }
            file += le32(section.opcode) + le32(data.count) + data
        }
        return file + [0x51, 0x04, 0xFD, 0x77, 0x00, 0x00, 0x00]
    }

    func parseV2(_ bytes: [UInt8], rom: UInt8, key: UInt8? = nil) -> Result<RealtekPayload, RealtekError> {
        bytes.withRaw { raw in
            do throws(RealtekError) { return .success(try RealtekPatchFile.parseV2(raw, romVersion: rom, keyID: key)) }
            catch { return .failure(error) }
        }
    }

    func v2Error(_ bytes: [UInt8], rom: UInt8) -> RealtekError? {
        if case .failure(let e) = parseV2(bytes, rom: rom) { return e }
        return nil
    }

    func v2Bytes(_ file: [UInt8], _ payload: RealtekPayload) -> [UInt8] {
        file.withRaw { raw in
            let none = UnsafeRawBufferPointer(start: nil, count: 0)
            return (0..<payload.totalLength).map { payload.byte(at: $0, file: raw, config: none) }
        }
    }

    @Test func test_realtek_v2_parse_and_errors() throws {
        let file = Self.v2(sections: [
            (0xFF, []),
            (0x01, [(1, 0, 0, [9, 9]), (2, 5, 0, [1, 2, 3]), (2, 1, 0, [4, 5])]),
            (0x03, [(2, 0, 7, [0xA]), (2, 0, 8, [0xB])]),
            (0x02, [(2, 5, 0, [6])]),
        ])
        // ROM version 1: eco 2, by ascending priority, a later one first among equals; no security header without a key id.
        let payload = try parseV2(file, rom: 1).get()
        #expect(!payload.hasTrailer && payload.firmwareVersion == 0x55 && payload.segmentCount == 3)
        #expect(v2Bytes(file, payload) == [4, 5, 6, 1, 2, 3])
        let keyed = try parseV2(file, rom: 1, key: 8).get()
        #expect(v2Bytes(file, keyed) == [0xB, 4, 5, 6, 1, 2, 3])
        #expect(v2Bytes(file, try parseV2(file, rom: 0).get()) == [9, 9])
        #expect(v2Error(file, rom: 7) == .v2NoPatch)
        for n in 0..<file.count {
            #expect(v2Error(Array(file.prefix(n)), rom: 1) != nil, "truncated to \(n) bytes")
        }
        for i in 0..<file.count {
            for value: UInt8 in [0x00, 0xFF, 0x80] {
                var bytes = file
                bytes[i] = value
                // Sub-sections lie before the 7-byte tail.
                #expect(Self.segmentsInBounds(parseV2(bytes, rom: 1), end: bytes.count - 7), "byte \(i) = \(value)")
            }
        }
        // More matching sub-sections than the payload has slots: an error.
        let many = Self.v2(sections: [(0x01, (0..<9).map { _ in (UInt8(2), UInt8(0), UInt8(0), [UInt8(1)]) })])
        #expect(v2Error(many, rom: 1) == .v2BadSection)
    }

    @Test func test_realtek_config_checks() {
        func check(_ bytes: [UInt8]) -> RealtekError? {
            bytes.withRaw { raw -> RealtekError? in
                do throws(RealtekError) { _ = try RealtekPatchFile.checkConfig(raw); return nil } catch { return error }
            }
        }
        #expect(check(hex("55 ab 23 87 04 00 d9 00 01 0f")) == nil)
        #expect(check(hex("55 ab 23 87 00 00")) == nil)
        #expect(check(hex("55 ab 23 87 05 00 d9 00 01 0f")) == .configTruncated)
        #expect(check(hex("55 ab 23 87 04 00 d9 00 05 0f")) == .configTruncated)
        #expect(check(hex("55 ab 23 88 00 00")) == .configBadMagic)
        #expect(check(hex("55 ab")) == .configTruncated)
    }

    static func complete(_ opcode: UInt16, _ params: [UInt8]) -> [UInt8] {
        [HCIEventCode.commandComplete, UInt8(3 + params.count), 1, UInt8(opcode & 0xFF), UInt8(opcode >> 8)] + params
    }

    @Test func test_realtek_loader_sequence() {
        let config = hex("55 ab 23 87 00 00")
        var loader = RealtekLoader()
        var packet = Capacity.HCIPacket()
        var sent: [[UInt8]] = []
        func record() { sent.append(packet.withBytes { Array($0) }) }
        #expect(loader.start(into: &packet) == .send); record()
        var step = Self.complete(HCIOpcode.reset, [0]).withRaw { loader.handle(event: $0, into: &packet) }
        #expect(step == .send); record()
        let version = Self.complete(HCIOpcode.readLocalVersion, [0, 0x0A, 0x0B, 0x00, 0x0A, 0x5D, 0x00, 0x61, 0x87])
        step = version.withRaw { loader.handle(event: $0, into: &packet) }
        #expect(step == .needFiles(.rtl8761bu))
        Self.file.withRaw { fw in
            config.withRaw { cfg in
                step = loader.provide(firmware: fw, config: cfg, into: &packet); record()
                #expect(step == .send)
                step = Self.complete(RealtekOpcode.readROMVersion, [0, 1]).withRaw { loader.handle(event: $0, into: &packet) }
                var guardCount = 0
                while step == .send && guardCount < 100 {
                    record(); guardCount += 1
                    let opcode = UInt16(packet[1]) | UInt16(packet[2]) << 8
                    let reply: [UInt8] = opcode == RealtekOpcode.download ? [0, packet[4]] : opcode == RealtekOpcode.readROMVersion ? [0, 1] : [0]
                    step = Self.complete(opcode, reply).withRaw { loader.handle(event: $0, into: &packet) }
                }
            }
        }
        #expect(step == .done(.rtl8761bu))
        let opcodes = sent.map { UInt16($0[1]) | UInt16($0[2]) << 8 }
        // Reset, Read Local Version, Read ROM Version, 3 downloads, Read ROM Version, Reset.
        #expect(opcodes == [0x0C03, 0x1001, 0xFC6D, 0xFC20, 0xFC20, 0xFC20, 0xFC6D, 0x0C03])
        let downloads = sent.filter { $0[1] == 0x20 && $0[2] == 0xFC }
        #expect(downloads.map { $0[4] } == [0x00, 0x01, 0x82])
        #expect(downloads.map { Int($0[3]) } == [253, 253, 253])
        let payload = downloads.flatMap { $0[5...] }
        let expected = Array(Self.bodyB.dropLast(4)) + [0x04, 0x03, 0x02, 0x01] + config
        #expect(Array(payload.prefix(expected.count)) == expected)
        #expect(payload.dropFirst(expected.count).allSatisfy { $0 == 0 } && payload.count == 3 * 252)
    }

    @Test func test_realtek_loader_not_realtek_and_failures() {
        var loader = RealtekLoader()
        var packet = Capacity.HCIPacket()
        _ = loader.start(into: &packet)
        _ = Self.complete(HCIOpcode.reset, [0]).withRaw { loader.handle(event: $0, into: &packet) }
        let other = Self.complete(HCIOpcode.readLocalVersion, [0, 0x0C, 0x00, 0x00, 0x0C, 0x0F, 0x00, 0x00, 0x00])
        #expect(other.withRaw { loader.handle(event: $0, into: &packet) } == .done(nil))

        // Missing required config, then a refused download.
        var l2 = RealtekLoader()
        _ = l2.start(into: &packet)
        _ = Self.complete(HCIOpcode.reset, [0]).withRaw { l2.handle(event: $0, into: &packet) }
        let v8822b = Self.complete(HCIOpcode.readLocalVersion, [0, 0x07, 0x0B, 0x00, 0x07, 0x5D, 0x00, 0x22, 0x88])
        #expect(v8822b.withRaw { l2.handle(event: $0, into: &packet) } == .needFiles(.rtl8822b))
        let none = UnsafeRawBufferPointer(start: nil, count: 0)
        #expect(Self.file.withRaw { l2.provide(firmware: $0, config: none, into: &packet) } == .failed(.configMissing))

        var l3 = RealtekLoader()
        _ = l3.start(into: &packet)
        _ = Self.complete(HCIOpcode.reset, [0]).withRaw { l3.handle(event: $0, into: &packet) }
        let v8761 = Self.complete(HCIOpcode.readLocalVersion, [0, 0x0A, 0x0B, 0x00, 0x0A, 0x5D, 0x00, 0x61, 0x87])
        _ = v8761.withRaw { l3.handle(event: $0, into: &packet) }
        Self.file.withRaw { fw in
            #expect(l3.provide(firmware: fw, config: none, into: &packet) == .send)
            #expect(Self.complete(RealtekOpcode.readROMVersion, [0, 9]).withRaw { l3.handle(event: $0, into: &packet) }
                    == .failed(.noPatchForROMVersion))
        }
    }

    @Test func test_realtek_download_index_wraps_as_linux() {
        #expect(RealtekLoader.downloadIndex(0, count: 200) == 0)
        #expect(RealtekLoader.downloadIndex(127, count: 200) == 127)
        #expect(RealtekLoader.downloadIndex(128, count: 200) == 1)
        #expect(RealtekLoader.downloadIndex(199, count: 200) == (72 | 0x80))
    }
}
