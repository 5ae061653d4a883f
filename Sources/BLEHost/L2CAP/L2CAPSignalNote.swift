/// What a signaling PDU asks of the host beyond its response.
public enum L2CAPSignalNote: Equatable {
    case none
    /// A peripheral asked (as central we accepted it): apply with LE Connection Update.
    case updateConnection(ConnectionParameters)
    /// The central answered our Connection Parameter Update Request.
    case updateAnswered(identifier: UInt8, accepted: Bool)
}
