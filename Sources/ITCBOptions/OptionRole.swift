/// Which role an option belongs to (a warning when the other role is chosen).
public enum OptionRole: Sendable {
    case any, peripheral, central
}
