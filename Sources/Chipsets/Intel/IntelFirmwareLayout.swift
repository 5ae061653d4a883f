import BLEHost

/// Where the parts of an `.sfi` file are for one secure boot engine (Linux
/// btintel.c: RSA header 644 bytes; TLV chips carry an ECDSA header after it).
public struct IntelFirmwareLayout: Equatable {
    /// (offset, length, fragment type) of the CSS header, public key and signature.
    public var sections: InlineArray<3, (offset: Int, length: Int, type: UInt8)>
    public var payloadOffset: Int
    public var bootAddress: UInt32 = 0

    public static func == (a: Self, b: Self) -> Bool {
        for i in 0..<3 where a.sections[i] != b.sections[i] { return false }
        return a.payloadOffset == b.payloadOffset && a.bootAddress == b.bootAddress
    }

    public static let maximumFileSize = 4 << 20
    static let rsaHeader = 644, ecdsaHeader = 320, cssVersionOffset = 8

    /// Checks the file for this controller and finds the boot address, before
    /// anything is sent: a truncated or corrupt file is an error, never half a download.
    public static func check(_ file: UnsafeRawBufferPointer, version: IntelVersion) throws(IntelError) -> IntelFirmwareLayout {
        guard file.count <= maximumFileSize else { throw .fileTooLarge }
        let ecdsa = version.generation == .tlv && version.secureBootEngine == 1
        var layout: IntelFirmwareLayout
        if ecdsa {
            layout = IntelFirmwareLayout(sections: [(644, 128, 0x00), (772, 96, 0x03), (868, 96, 0x02)],
                                         payloadOffset: rsaHeader + ecdsaHeader)
        } else {
            layout = IntelFirmwareLayout(sections: [(0, 128, 0x00), (128, 256, 0x03), (388, 256, 0x02)],
                                         payloadOffset: version.generation == .tlv ? rsaHeader + ecdsaHeader : rsaHeader)
        }
        guard file.count > layout.payloadOffset else { throw file.count == layout.payloadOffset ? .emptyPayload : .fileTooShort }
        // CSS header version: 0x00010000 RSA, 0x00020000 ECDSA (Linux checks the same words).
        if ecdsa {
            guard file[644] == 0x06, le32(file, 644 + cssVersionOffset) == 0x0002_0000 else { throw .badCSSHeader }
        } else {
            guard le32(file, cssVersionOffset) == 0x0001_0000 else { throw .badCSSHeader }
        }
        var at = layout.payloadOffset
        var group = 0
        var bootParams = false
        while at < file.count {
            guard file.count - at >= 3 else { throw .commandOutOfBounds }
            let opcode = UInt16(file[at]) | UInt16(file[at + 1]) << 8
            let length = Int(file[at + 2])
            guard file.count - at - 3 >= length else { throw .commandOutOfBounds }
            // The payload is vendor commands only (OGF 0x3F); anything else is a length gone wrong.
            guard opcode >> 10 == 0x3F else { throw .notVendorCommand }
            if opcode == IntelOpcode.writeBootParams {
                guard length >= 4 else { throw .noBootAddress }
                layout.bootAddress = le32(file, at + 3)
                bootParams = true
            }
            at += 3 + length
            group += 3 + length
            if group % 4 == 0 { group = 0 }
        }
        guard group == 0 else { throw .unalignedEnd }
        // Without Write Boot Params the Intel Reset would boot address 0: refuse instead.
        guard bootParams else { throw .noBootAddress }
        return layout
    }

    /// The next group of whole commands from `at` whose size is a multiple of 4
    /// (the boot loader's Secure Send data rule; the file carries NOPs for it).
    static func groupEnd(_ file: UnsafeRawBufferPointer, from at: Int) -> Int {
        var end = at
        repeat {
            end += 3 + Int(file[end + 2])
        } while (end - at) % 4 != 0
        return end
    }

    /// Checks a DDC file: records of a length byte and that many bytes, to the end.
    public static func checkDDC(_ ddc: UnsafeRawBufferPointer) throws(IntelError) -> Int {
        var at = 0, records = 0
        while at < ddc.count {
            let length = 1 + Int(ddc[at])
            guard ddc.count - at >= length, length <= 253 else { throw .badDDC }
            at += length
            records += 1
        }
        return records
    }
}
