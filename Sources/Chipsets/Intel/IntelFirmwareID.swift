import BLEHost

/// The firmware id a TLV Read Version reports (type 0x50, Linux btintel.h
/// `INTEL_TLV_FW_ID`): text such as `usb` or `pci` that Linux puts into the
/// file name of hardware variant 0x1e and later (`btintel_get_fw_name_tlv`:
/// `ibt-<cnvi>-<cnvr>-<fw_id>.sfi`). Linux keeps it in `u8
/// fw_id[BTINTEL_FWID_MAXLEN]` (64) with `snprintf(…, "%s", tlv->val)`: the
/// text up to its NUL, at most 63 bytes. Here it also stops at the record's
/// end (Linux reads on into the next record when the value has no NUL).
/// Controller text: escaped where printed (UntrustedText).
public struct IntelFirmwareID: Equatable {
    public static let capacity = 63
    public private(set) var text = Capacity.IntelFirmwareIDText()

    public init() {}

    /// From a TLV value: up to its first NUL, its end, or 63 bytes.
    public init(value: UnsafeRawBufferPointer) {
        for byte in value {
            guard byte != 0, text.append(byte) else { break }
        }
    }

    /// Linux tests the whole array against zeros (`memcmp(ver->fw_id, zero, …)`
    /// after a `memset`): an empty text.
    public var isEmpty: Bool { text.isEmpty }

    public static func == (a: Self, b: Self) -> Bool {
        a.text.withBytes { b.text.equals($0) }
    }
}
