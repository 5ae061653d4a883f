/// Events of the GATT client (filled in with the central role).
public enum GATTClientEvent {
    case placeholder
}

/// Per-connection GATT client state (filled in with the central role).
public struct GATTClient {
    public var deadline: UInt64? = nil
    public init() {}
}

extension Host {
    mutating func handleClientPDU(_ index: Int, _ pdu: UnsafeRawBufferPointer) {}
}
