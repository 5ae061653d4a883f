/// Results of the GATT client, one per finished procedure.
public enum GATTClientEvent {
    case mtuExchanged(connection: UInt16, mtu: UInt16)
    /// Discover Primary Service By Service UUID found the service.
    case serviceDiscovered(connection: UInt16, start: UInt16, end: UInt16)
    case serviceNotFound(connection: UInt16)
    /// Discovery finished; the results are in `Host.client`.
    case characteristicsDiscovered(connection: UInt16, count: Int)
    case descriptorsDiscovered(connection: UInt16, count: Int)
    case writeCompleted(connection: UInt16, attribute: UInt16)
    /// The value is in `Host.client`'s link (`GATTClientLink.readValue`).
    case readCompleted(connection: UInt16, attribute: UInt16)
    /// The server answered with an ATT Error Response (Vol 3 Part F §3.4.1.1).
    case error(connection: UInt16, request: UInt8, attribute: UInt16, code: UInt8)
    /// No response within 30 s: the bearer is dead and the link is being closed (§3.3.3).
    case timeout(connection: UInt16, request: UInt8)
    /// A response that did not fit the outstanding request was dropped.
    case unexpectedResponse(connection: UInt16, opcode: UInt8)
}
