/// Our GAP role on the air.
public enum Role: Equatable {
    case peripheral
    case central
}
