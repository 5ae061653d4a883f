import BLEHost

/// What `.needFiles` asks for: up to two candidate names for the firmware
/// (the first that exists is read, as Linux tries them) and an optional companion.
public struct FileRequest {
    public var firmware: ChipsetText
    public var alternative: ChipsetText
    public var companion: ChipsetText
    public var companionRequired: Bool
    /// No firmware file found: the chipset goes on without one (from ROM).
    public var optional: Bool
    public init() {
        firmware = FixedBytes()
        alternative = FixedBytes()
        companion = FixedBytes()
        companionRequired = false
        optional = false
    }
}
