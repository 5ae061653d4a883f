import BLEHost

/// The 8-Ball GATT contract, wire-compatible with the ITCB apps (the table in
/// docs/COMMAND-LINE.md, "The peripheral").
public enum EightBallUUID {
    /// 8E38140A-27BE-4090-8955-4FC4B5698D1E
    public static let service = BLEUUID(high: 0x8E38_140A_27BE_4090, low: 0x8955_4FC4_B569_8D1E)
    /// BDD37D7A-F66A-47B9-A49C-FE29FD235A77: write (with response)
    public static let question = BLEUUID(high: 0xBDD3_7D7A_F66A_47B9, low: 0xA49C_FE29_FD23_5A77)
    /// 349A0D7B-6215-4E2C-A095-AF078D737445: read, notify
    public static let answer = BLEUUID(high: 0x349A_0D7B_6215_4E2C, low: 0xA095_AF07_8D73_7445)
}

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
