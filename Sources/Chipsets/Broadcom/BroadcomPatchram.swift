import BLEHost

/// The `.hcd` format: records of opcode (LE16), parameter length (1 byte),
/// parameters, to the end of the file.
public enum BroadcomPatchram {
    /// The Pi's files are 30–64 KB.
    public static let maximumFileSize = 512 * 1024

    /// Checks every record before anything is sent (a bad file is one error,
    /// never half a download); returns the number of records.
    public static func check(_ file: UnsafeRawBufferPointer) throws(BroadcomError) -> Int {
        guard file.count > 0 else { throw .emptyFile }
        guard file.count <= maximumFileSize else { throw .fileTooLarge }
        var at = 0, records = 0, last: UInt16 = 0
        while at < file.count {
            guard file.count - at >= 3 else { throw .truncatedRecord }
            let opcode = UInt16(file[at]) | UInt16(file[at + 1]) << 8
            let length = Int(file[at + 2])
            guard file.count - at - 3 >= length else { throw .truncatedRecord }
            guard opcode >> 10 == 0x3F else { throw .notVendorCommand }
            last = opcode
            at += 3 + length
            records += 1
        }
        guard last == BroadcomOpcode.launchRAM else { throw .noLaunchRAM }
        return records
    }
}
