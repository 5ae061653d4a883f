/// One attribute of the static GATT database (Core Vol 3 Part F §3.2).
public struct GATTAttribute: Sendable {
    public var type: BLEUUID
    /// Characteristic properties for value and CCCD attributes; 0 for declarations.
    public var properties: CharacteristicProperties
    public var readable: Bool
    public var writable: Bool
    public var writableWithoutResponse: Bool
    /// The value comes from the GATTServerDelegate, not from the database.
    public var dynamic: Bool
    /// Index into the bearer's CCCD table, -1 when this is not a CCCD.
    public var cccdIndex: Int
    /// For service declarations: the last handle of the service (the group end).
    public var groupEnd: UInt16
    var valueStart: Int
    var valueLength: Int

    static let empty = GATTAttribute(
        type: BLEUUID(uuid16: 0), properties: CharacteristicProperties(rawValue: 0), readable: false,
        writable: false, writableWithoutResponse: false, dynamic: false, cccdIndex: -1, groupEnd: 0,
        valueStart: 0, valueLength: 0)

    public var isCCCD: Bool { cccdIndex >= 0 }
    public var isServiceDeclaration: Bool {
        type.uuid16 == GATTType.primaryService || type.uuid16 == GATTType.secondaryService
    }
}
