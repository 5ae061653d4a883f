/// What a shell completes for an option's value.
public enum OptionCompletion: Sendable {
    case none, file, directory
    case words([String])
}
