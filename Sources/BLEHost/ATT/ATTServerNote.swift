/// What a handled PDU means for the host, besides the response.
public enum ATTServerNote: Equatable {
    case none
    case mtuExchanged(UInt16)
    case subscription(attribute: UInt16, value: UInt16)
}
