import BLEHost

/// What Read Version (and, for legacy boot loaders, Read Boot Params) said.
public struct IntelVersion: Equatable {
    public enum Generation: UInt8 { case legacy, tlv }
    public var generation: Generation = .tlv
    public var platform: UInt8 = 0
    public var variant: UInt8 = 0
    /// Legacy: hardware and firmware revision (file names of variants 0x11…0x14).
    public var hardwareRevision: UInt8 = 0
    public var firmwareRevision: UInt8 = 0
    /// Boot loader (true) or operational firmware.
    public var inBootloader = false
    /// TLV image type 0x02: an intermediate loader (not supported).
    public var intermediate = false
    /// TLV 0x1C (Linux `INTEL_TLV_IMAGE_TYPE`): 1 boot loader, 2 intermediate
    /// loader, 3 operational firmware (`BTINTEL_IMG_BOOTLOADER`, `_IML`, `_OP`).
    public var imageType: UInt8 = 0
    /// TLV 0x50 (Linux `INTEL_TLV_FW_ID`): part of the file name from variant 0x1e on.
    public var firmwareID = IntelFirmwareID()
    public var deviceRevision: UInt16 = 0
    public var cnviTop: UInt32 = 0
    public var cnvrTop: UInt32 = 0
    public var hasCNVI = false
    public var hasCNVR = false
    /// Secure boot engine: 0 RSA, 1 ECDSA; 0xFF when not reported.
    public var secureBootEngine: UInt8 = 0xFF
    public var limitedCCE: UInt8 = 0

    public init() {}

    /// Parses the return parameters of Read Version (status first). Legacy is
    /// recognised as Linux does: exactly 10 bytes with platform 0x37 second.
    public static func parse(_ rp: UnsafeRawBufferPointer) -> IntelVersion? {
        guard rp.count >= 1, rp[0] == HCIStatus.success else { return nil }
        var v = IntelVersion()
        if rp.count == 10 && rp[1] == 0x37 {
            v.generation = .legacy
            v.platform = rp[1]
            v.variant = rp[2]
            v.hardwareRevision = rp[3]
            v.inBootloader = rp[4] == 0x06
            guard rp[4] == 0x06 || rp[4] == 0x23 else { return nil }
            v.firmwareRevision = rp[5]
            return v
        }
        var at = 1
        while rp.count - at >= 2 {
            let type = rp[at], length = Int(rp[at + 1])
            guard rp.count - at - 2 >= length else { return nil }
            let value = UnsafeRawBufferPointer(rebasing: rp[(at + 2)..<(at + 2 + length)])
            switch type {
            case 0x00: return v.checked
            case 0x10 where length >= 4: v.cnviTop = le32(value); v.hasCNVI = true
            case 0x11 where length >= 4: v.cnvrTop = le32(value); v.hasCNVR = true
            case 0x12 where length >= 4:
                let bt = le32(value)
                v.platform = UInt8(truncatingIfNeeded: bt >> 8)
                v.variant = UInt8(truncatingIfNeeded: bt >> 16) & 0x3F
            case 0x16 where length >= 2: v.deviceRevision = UInt16(value[0]) | UInt16(value[1]) << 8
            case 0x1C where length >= 1:
                v.imageType = value[0]
                v.inBootloader = value[0] == 0x01
                v.intermediate = value[0] == 0x02
            case 0x2E where length >= 1: v.limitedCCE = value[0]
            case 0x2F where length >= 1: v.secureBootEngine = value[0]
            case 0x50: v.firmwareID = IntelFirmwareID(value: value)
            default: break
            }
            at += 2 + length
        }
        return v.checked
    }

    var checked: IntelVersion? { platform == 0x37 ? self : nil }

    /// Read Boot Params (legacy boot loader): status, OTP format/content/patch, device revision …
    mutating func applyBootParams(_ rp: UnsafeRawBufferPointer) -> Bool {
        // 23 bytes (Linux struct intel_boot_params): limited CCE is byte 21.
        guard rp.count >= 23, rp[0] == HCIStatus.success else { return false }
        deviceRevision = UInt16(rp[4]) | UInt16(rp[5]) << 8
        limitedCCE = rp[21]
        return true
    }

    /// The variants this loader knows (Linux `btintel_version_info` / `_tlv`).
    public var isSupported: Bool {
        switch (generation, variant) {
        case (.legacy, 0x0B), (.legacy, 0x0C), (.legacy, 0x11...0x14): true
        case (.tlv, 0x17...0x19), (.tlv, 0x1B), (.tlv, 0x1C), (.tlv, 0x1E): true
        default: false
        }
    }

    public var name: StaticString {
        switch (generation, variant) {
        case (.legacy, 0x0B): "8260"
        case (.legacy, 0x0C): "8265"
        case (.legacy, 0x11): "9460/9560"
        case (.legacy, 0x12): "9160/9260"
        case (.legacy, 0x13): "AX201"
        case (.legacy, 0x14): "AX200"
        case (.tlv, 0x17): "AX210"
        case (.tlv, 0x18), (.tlv, 0x19): "AX211"
        case (.tlv, 0x1B): "BE201"
        case (.tlv, 0x1C): "BE200"
        case (.tlv, 0x1E): "BE202"
        default: "controller"
        }
    }

    /// Bumble's and Linux's packing of a CNVx TOP value into four hex digits.
    static func packCNV(_ v: UInt32) -> UInt16 {
        UInt16(truncatingIfNeeded: (v & 0xF) << 12 | (v >> 4) & 0xF | ((v >> 8) & 0xF) << 4 | ((v >> 24) & 0xF) << 8)
    }

    /// From hardware variant 0x1e (BlazarI) on, a boot loader loads an
    /// intermediate loader first, which names the operational firmware by its
    /// firmware id (Linux `btintel_bootloader_setup_tlv`).
    public var bootsIntermediateLoader: Bool { generation == .tlv && variant >= 0x1E }

    /// `ibt-…` without the suffix, as Linux names it (the `.ddc` takes the same
    /// name, with its own suffix):
    /// - legacy (`btintel_get_fw_name`): `ibt-<variant>-<device revision>` for
    ///   0x0B/0x0C, else `ibt-<variant>-<hw revision>-<fw revision>` (decimal);
    /// - TLV (`btintel_get_fw_name_tlv`): `ibt-<cnvi>-<cnvr>` (the packed CNVi and
    ///   CNVr TOP, hex); from hardware variant 0x1e on (`INTEL_HW_VARIANT(cnvi_bt)
    ///   >= 0x1e`) the boot loader's is `ibt-<cnvi>-<cnvr>-iml` (the intermediate
    ///   loader) and, in any other image, one with a firmware id is
    ///   `ibt-<cnvi>-<cnvr>-<fw_id>`; without one, the plain name.
    /// A pure function of the parsed Read Version.
    public func writeBaseName<let n: Int>(into out: inout FixedBytes<n>) {
        switch generation {
        case .legacy:
            append("ibt-", decimal: UInt32(variant), to: &out)
            if variant == 0x0B || variant == 0x0C {
                append("-", decimal: UInt32(deviceRevision), to: &out)
            } else {
                append("-", decimal: UInt32(hardwareRevision), to: &out)
                append("-", decimal: UInt32(firmwareRevision), to: &out)
            }
        case .tlv:
            append("ibt-", to: &out)
            appendHex4(Self.packCNV(cnviTop), to: &out)
            _ = out.append(UInt8(ascii: "-"))
            appendHex4(Self.packCNV(cnvrTop), to: &out)
            guard bootsIntermediateLoader else { return }
            if imageType == 0x01 {
                append("-iml", to: &out)
            } else if !firmwareID.isEmpty {
                _ = out.append(UInt8(ascii: "-"))
                firmwareID.text.withBytes { _ = out.append($0) }
            }
        }
    }
}

func le32(_ b: UnsafeRawBufferPointer, _ at: Int = 0) -> UInt32 {
    UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24
}
