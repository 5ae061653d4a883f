import BLEHost

public enum RealtekPatchFile {
    /// Larger than any known patch (rtl8852cu_fw.bin is 107 KB).
    public static let maximumFileSize = 1 << 20
    /// Download indices wrap after 128 fragments; keep well inside what ROMs accept.
    public static let maximumPayload = 256 * 1024
    public static let configMagic: UInt32 = 0x8723_AB55

    static let v1Signature: StaticString = "Realtech"
    static let v2Signature: StaticString = "RTBTCore"
    static let v1HeaderSize = 14

    static func hasPrefix(_ file: UnsafeRawBufferPointer, _ signature: StaticString) -> Bool {
        let n = signature.utf8CodeUnitCount
        guard file.count >= n else { return false }
        let s = signature.utf8Start
        for i in 0..<n where file[i] != s[i] { return false }
        return true
    }

    static func u16(_ b: UnsafeRawBufferPointer, _ at: Int) -> UInt16 {
        UInt16(b[at]) | UInt16(b[at + 1]) << 8
    }

    static func u32(_ b: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24
    }

    public enum Format: Equatable { case v1, v2 }

    public static func format(_ file: UnsafeRawBufferPointer) throws(RealtekError) -> Format {
        if hasPrefix(file, v1Signature) { return .v1 }
        if hasPrefix(file, v2Signature) { return .v2 }
        if file.count < 8 { throw .fileTooShort }
        throw .unknownSignature
    }

    /// The project id from the extension section at the end of a v1 file:
    /// instructions read backwards from before the signature 51 04 FD 77, each
    /// `data…, length, opcode`; opcode 0 with length 1 is the project id, 0xFF ends.
    public static func projectID(_ file: UnsafeRawBufferPointer) throws(RealtekError) -> UInt8 {
        let n = file.count
        guard n >= v1HeaderSize + 4 else { throw .fileTooShort }
        guard file[n - 4] == 0x51, file[n - 3] == 0x04, file[n - 2] == 0xFD, file[n - 1] == 0x77 else {
            throw .missingExtensionSignature
        }
        var offset = n - 4
        while offset >= v1HeaderSize + 2 {
            let opcode = file[offset - 1]
            let length = Int(file[offset - 2])
            offset -= 2
            if opcode == 0xFF { break }
            if length == 0 { throw .badExtensionInstruction }
            if opcode == 0 && length == 1 { return file[offset - 1] }
            offset -= length
        }
        throw .projectIDNotFound
    }

    /// Parses an epatch v1 file ("Realtech", version u32, patch count u16, then
    /// chip ids u16[n], lengths u16[n], offsets u32[n]) and selects the patch
    /// whose chip id is `romVersion + 1`.
    public static func parseV1(_ file: UnsafeRawBufferPointer, romVersion: UInt8,
                               expectedROM: UInt16?) throws(RealtekError) -> RealtekPayload {
        guard file.count <= maximumFileSize else { throw .fileTooLarge }
        guard hasPrefix(file, v1Signature) else {
            throw file.count < 8 ? .fileTooShort : .unknownSignature
        }
        guard file.count >= v1HeaderSize + 4 else { throw .fileTooShort }
        let project = try projectID(file)
        if let expectedROM {
            guard RealtekChip.romLMPSubversion(projectID: project) == expectedROM else { throw .projectMismatch }
        }
        let version = u32(file, 8)
        let count = Int(u16(file, 12))
        guard v1HeaderSize + 8 * count <= file.count else { throw .tableOutOfBounds }
        let want = UInt16(romVersion) &+ 1
        for i in 0..<count {
            let chipID = u16(file, v1HeaderSize + 2 * i)
            guard chipID == want else { continue }
            let length = Int(u16(file, v1HeaderSize + 2 * count + 2 * i))
            let offset = Int(u32(file, v1HeaderSize + 4 * count + 4 * i))
            guard offset <= file.count, length <= file.count - offset else { throw .patchOutOfBounds }
            guard length >= 8 else { throw .patchTooShort }
            var payload = RealtekPayload()
            _ = payload.append(start: offset, length: length - 4)
            payload.hasTrailer = true
            payload.trailer = version
            payload.firmwareVersion = version
            payload.projectID = project
            return payload
        }
        throw .noPatchForROMVersion
    }

    /// Parses an epatch v2 file: "RTBTCore", firmware version (8 bytes, the
    /// low 4 kept), section count u32, then sections (opcode u32, length u32,
    /// data); the last 7 bytes of the file are a tail outside the sections.
    /// Sections 0x01 (patch snippets), 0x02 (dummy header) and 0x03 (security
    /// header) hold a count u16, a reserved u16 and sub-sections (eco u8,
    /// priority u8, key id u8 / reserved, reserved u8, length u32, data). The
    /// sub-sections with eco == `romVersion + 1` (security headers also with the
    /// controller's key id; none without one) are the payload, in ascending
    /// priority, a later one before an earlier one of equal priority (btrtl's
    /// order). No trailer is patched in.
    public static func parseV2(_ file: UnsafeRawBufferPointer, romVersion: UInt8,
                               keyID: UInt8? = nil) throws(RealtekError) -> RealtekPayload {
        guard file.count <= maximumFileSize else { throw .fileTooLarge }
        guard hasPrefix(file, v2Signature) else {
            throw file.count < 8 ? .fileTooShort : .unknownSignature
        }
        guard file.count >= 20 + 7 else { throw .fileTooShort }
        let end = file.count - 7
        let version = u32(file, 8)
        let sections = Int(u32(file, 16))
        var offset = 20
        let want = UInt8(truncatingIfNeeded: Int(romVersion) + 1)
        var payload = RealtekPayload()
        payload.firmwareVersion = version
        var priorities: InlineArray<8, UInt8> = InlineArray(repeating: 0)
        var index = 0
        while index < sections {
            guard end - offset >= 8 else { throw .v2BadSection }
            let opcode = u32(file, offset)
            let length = Int(u32(file, offset + 4))
            offset += 8
            guard length <= end - offset else { throw .v2BadSection }
            if opcode == 0x01 || opcode == 0x02 || opcode == 0x03 {
                guard length >= 4 else { throw .v2BadSection }
                let count = Int(u16(file, offset))
                var at = offset + 4
                let sectionEnd = offset + length
                for _ in 0..<count {
                    guard sectionEnd - at >= 8 else { throw .v2BadSection }
                    let eco = file[at]
                    let priority = file[at + 1]
                    let key = file[at + 2]
                    let subLength = Int(u32(file, at + 4))
                    at += 8
                    guard subLength <= sectionEnd - at else { throw .v2BadSection }
                    if eco == want && (opcode != 0x03 || keyID == key) {
                        var slot = 0
                        while slot < payload.segmentCount && priorities[slot] < priority { slot += 1 }
                        guard payload.insert(start: at, length: subLength, at: slot) else { throw .v2BadSection }
                        var i = payload.segmentCount - 1
                        while i > slot { priorities[i] = priorities[i - 1]; i -= 1 }
                        priorities[slot] = priority
                    }
                    at += subLength
                }
            }
            offset += length
            index += 1
        }
        guard payload.segmentCount > 0 else { throw .v2NoPatch }
        return payload
    }

    /// Checks a config file (magic 0x8723AB55, u16 data length, then entries of
    /// offset u16, length u8, data) and returns the bytes to append (all of it).
    public static func checkConfig(_ config: UnsafeRawBufferPointer) throws(RealtekError) -> Int {
        guard config.count >= 6 else { throw .configTruncated }
        guard u32(config, 0) == configMagic else { throw .configBadMagic }
        let length = Int(u16(config, 4))
        guard length <= config.count - 6 else { throw .configTruncated }
        var at = 6
        let end = 6 + length
        while at < end {
            guard end - at >= 3 else { throw .configTruncated }
            let entry = Int(config[at + 2])
            at += 3
            guard entry <= end - at else { throw .configTruncated }
            at += entry
        }
        return config.count
    }
}
