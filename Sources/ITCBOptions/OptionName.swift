/// Every option's long name, once: the table's rows, the parser's results and
/// the settings (`CommandLineSettings.given`, by its place) spell them from
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
    /// Read as bytes from `names` (comparing each case's rawValue, a String
    /// made by a switch, was 2 KB of code, 2026-11-28).
    public static func named(_ name: Substring) -> (option: OptionName, exact: Bool)? {
        withBytes(name) { named(bytes: $0) }
    }

    /// The same over the name's bytes (the parser's, over the arguments as given).
    @inline(never)
    public static func named(bytes given: UnsafeBufferPointer<UInt8>) -> (option: OptionName, exact: Bool)? {
        let table = UnsafeBufferPointer(start: names.utf8Start, count: names.utf8CodeUnitCount)
        var found: Int? = nil, candidates = 0
        var index = 0, start = 0
        while start < table.count {
            var end = start
            while table[end] != 0 { end += 1 }
            // This name begins with the given bytes (or is them).
            if end - start >= given.count, table[start..<(start + given.count)].elementsEqual(given) {
                if end - start == given.count { return (declared(index), true) }
                found = index
                candidates += 1
            }
            index += 1
            start = end + 1
        }
        guard let found, candidates == 1 else { return nil }
        return (declared(found), false)
    }

    /// Its name (the rawValue's bytes) in `names`: messages spell it from
    /// there, not from the String the rawValue switch makes (2026-11-28).
    @inline(never)
    public var nameBytes: UnsafeBufferPointer<UInt8> {
        let table = UnsafeBufferPointer(start: Self.names.utf8Start, count: Self.names.utf8CodeUnitCount)
        var remaining = declaredIndex
        var start = 0
        while remaining > 0 {
            if table[start] == 0 { remaining -= 1 }
            start += 1
        }
        var end = start
        while table[end] != 0 { end += 1 }
        return UnsafeBufferPointer(rebasing: table[start..<end])
    }

    /// The case declared `index`-th, and a case's place: a case without a
    /// payload is stored as its place in the declaration, so no `allCases`
    /// array is built to look one up (2026-11-29).
    static func declared(_ index: Int) -> OptionName { unsafeBitCast(UInt8(truncatingIfNeeded: index), to: OptionName.self) }
    public var declaredIndex: Int { Int(unsafeBitCast(self, to: UInt8.self)) }

    /// Every case's rawValue in the order of the cases, each ended by a 0 byte
    /// (CommandLineTests holds it to them).
    public static let names: StaticString = """
        role\0transport\0btsnoop\0metrics-file\0log-level\0address\0controller-info\0list-controllers\0\
        health-check\0udev-match\0name\0answers\0max-centrals\0idle-timeout\0connection-interval\0seed\0\
        question\0rssi-min\0rssi-max\0timeout\0count\0peer\0scan\0json\0usb-reset\0exit-on-unplug\0\
        firmware-dir\0device-tree\0version\0help\0
        """
}
