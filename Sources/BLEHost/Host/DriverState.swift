/// Where the driver is.
public enum DriverState: Equatable {
    /// A vendor set-up is running (firmware download).
    case settingUp
    /// The set-up asks for its files: read them and call `provideFiles`.
    case needsFiles
    /// The host runs (bring-up, then the application).
    case running
    case finished(HostLoopEnd)
}
