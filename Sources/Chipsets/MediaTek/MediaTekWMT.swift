import BLEHost

/// MediaTek MT7921 (chip id 0x7961), MT7922 and MT7925: the Bluetooth half of
/// the Wi-Fi/Bluetooth combos in mini PCs and laptops. They boot without their
/// RAM code and answer nothing useful until it is downloaded. Facts from Linux
/// `btmtk.c`/`btusb.c`; an independent, sans-IO implementation.
///
/// Sequence (over USB from the start, elsewhere after the probe's Reset and
/// Read Local Version): read the chip id (0x80000008, then 0x70010200), the
/// firmware version (0x80021004) and the flavour (0x70010020, bit 7); ask for
/// `BT_RAM_CODE_MT<id>_1[a]_<version+1>_hdr.bin`; check the whole file; for
/// each section that has bytes to load, the section status query (WMT patch
/// download, flag 0, the section map's 52 bytes), then when the chip says
/// "not there" the section in 250-byte WMT commands (flags 1 first, 2, 3
/// last); 100 ms for the activation; the endpoint reset option register; WMT
/// function control 1 (Bluetooth on). A chip whose sections are all there
/// already (warm start) gets no download.
///
/// WMT commands are HCI command 0xFC6F with a header (direction 1, operation,
/// length + 1 LE16, flag); the chip answers with vendor event 0xE4 (direction,
/// operation, length, flag, data). Register reads and writes are WMT
/// operation 8 in this program's own form (flag: 0 the id space, 1 the UHW
/// space; data: 2 read / 1 write, address LE32, value LE32) with the answer
/// (status, value LE32) after the header: over USB the board turns them into
/// the vendor control requests Linux sends (0x63 for the id space, 0x01/0x02
/// for UHW) and reads the WMT answers through control IN, on the steps'
/// behalf; over H4 (TCP, a UART) they go to the controller as they are.
public enum MediaTekWMT {
    public static let opcode: UInt16 = 0xFC6F
    public static let event: UInt8 = 0xE4
    public static let patchDownload: UInt8 = 0x01
    public static let functionControl: UInt8 = 0x06
    public static let register: UInt8 = 0x08
    /// Register spaces (the flag of a register command).
    public static let idSpace: UInt8 = 0
    public static let uhwSpace: UInt8 = 1
    public static let read: UInt8 = 2
    public static let write: UInt8 = 1
}
