/// Characteristic properties (Core Vol 3 Part G §3.3.1.1).
public struct CharacteristicProperties: Equatable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let read = CharacteristicProperties(rawValue: 0x02)
    public static let writeWithoutResponse = CharacteristicProperties(rawValue: 0x04)
    public static let write = CharacteristicProperties(rawValue: 0x08)
    public static let notify = CharacteristicProperties(rawValue: 0x10)
    public static let indicate = CharacteristicProperties(rawValue: 0x20)

    public func contains(_ other: CharacteristicProperties) -> Bool { rawValue & other.rawValue == other.rawValue }
    public func union(_ other: CharacteristicProperties) -> CharacteristicProperties {
        CharacteristicProperties(rawValue: rawValue | other.rawValue)
    }
}
