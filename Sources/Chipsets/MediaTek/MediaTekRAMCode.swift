import BLEHost

/// The `_hdr.bin` format: a 32-byte header (build time, "ALPS", hardware and
/// software versions, 0xFFFFFFFF), a 64-byte global descriptor (the section
/// count at byte 12), a 64-byte map per section (type, offset, size, then the
/// 52 bytes the status query sends: load address, load size, ...).
public enum MediaTekRAMCode {
    public static let headerSize = 32
    public static let descriptorSize = 64
    public static let mapSize = 64
    /// The Debian files are 450–540 KB.
    public static let maximumFileSize = 2 * 1024 * 1024
    public static let maximumSections = 32

    static func u32(_ file: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        UInt32(file[at]) | UInt32(file[at + 1]) << 8 | UInt32(file[at + 2]) << 16 | UInt32(file[at + 3]) << 24
    }

    /// Where section `index`'s map starts.
    public static func map(_ index: Int) -> Int { headerSize + descriptorSize + mapSize * index }

    /// Checks the header and every section before anything is sent (a bad file
    /// is one error, never half a download); returns the number of sections.
    public static func check(_ file: UnsafeRawBufferPointer) throws(MediaTekError) -> Int {
        guard file.count <= maximumFileSize else { throw .fileTooLarge }
        guard file.count >= map(0) else { throw .fileTooShort }
        guard u32(file, 16) == 0x5350_4C41, u32(file, 24) == 0xFFFF_FFFF else { throw .foreignFile }
        let sections = Int(u32(file, headerSize + 12))
        guard sections > 0, sections <= maximumSections else { throw .badSectionCount }
        guard file.count >= map(sections) else { throw .fileTooShort }
        for index in 0..<sections {
            let at = map(index)
            let offset = Int(u32(file, at + 4)), size = Int(u32(file, at + 8)), load = Int(u32(file, at + 16))
            guard offset <= file.count, size <= file.count - offset, load <= size else { throw .sectionOutside }
        }
        return sections
    }
}
