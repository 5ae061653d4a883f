import BLEHost

/// Where the 8-Ball's values live in its static GATT database. The database
/// itself is built into the host's storage (`build`), never kept twice.
public struct EightBallDatabase {
    public var questionHandle: UInt16 = 0
    public var answerHandle: UInt16 = 0
    public var serviceChangedHandle: UInt16 = 0

    /// Generic computer appearance is wrong for a toy; 0x0000 "Unknown" is honest.
    public static let appearance: UInt16 = 0x0000

    /// Adds the GAP/GATT services and the 8-Ball service to `database`; returns the handles.
    public static func build(name: UnsafeRawBufferPointer, into database: inout GATTDatabase) -> EightBallDatabase {
        var handles = EightBallDatabase()
        handles.serviceChangedHandle = database.addGAPAndGATTServices(name: name, appearance: EightBallDatabase.appearance)
        database.addPrimaryService(EightBallUUID.service)
        handles.questionHandle = database.addCharacteristic(EightBallUUID.question, properties: .write)
        handles.answerHandle = database.addCharacteristic(
            EightBallUUID.answer, properties: CharacteristicProperties.read.union(.notify))
        return handles
    }

    /// A database for `name` alone (tests, the ATT fuzz target).
    public static func makeDatabase(name: UnsafeRawBufferPointer) -> GATTDatabase {
        var database = GATTDatabase()
        _ = build(name: name, into: &database)
        return database
    }
}
