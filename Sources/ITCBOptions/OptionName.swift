/// Every option's long name, once: the table's rows, the parser's results and
/// the settings' switch (`CommandLineSettings.init`, exhaustive) spell them from
/// here, so a misspelt name does not compile.
public enum OptionName: String, CaseIterable, Sendable {
    case role
    case transport
    case btsnoop
    case metricsFile = "metrics-file"
    case logLevel = "log-level"
    case address
    case controllerInfo = "controller-info"
    case listControllers = "list-controllers"
    case healthCheck = "health-check"
    case udevMatch = "udev-match"
    case name
    case answers
    case maxCentrals = "max-centrals"
    case idleTimeout = "idle-timeout"
    case connectionInterval = "connection-interval"
    case seed
    case question
    case rssiMin = "rssi-min"
    case rssiMax = "rssi-max"
    case timeout
    case count
    case peer
    case scan
    case json
    case usbReset = "usb-reset"
    case exitOnUnplug = "exit-on-unplug"
    case firmwareDir = "firmware-dir"
    case deviceTree = "device-tree"
    case version
    case help
}

extension OptionName {
    /// The option called `name`, else the one `name` abbreviates when it
    /// abbreviates only one (getopt_long's choice; `exact` false): nil for neither.
    @inline(never)
    public static func named(_ name: Substring) -> (option: OptionName, exact: Bool)? {
        var found: OptionName? = nil, candidates = 0
        for option in allCases {
            if sameBytes(option.rawValue, name) { return (option, true) }
            if option.rawValue.hasBytePrefix(name) {
                found = option
                candidates += 1
            }
        }
        guard let found, candidates == 1 else { return nil }
        return (found, false)
    }
}
