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
