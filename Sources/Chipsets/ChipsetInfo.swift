import BLEHost

/// The table's data for one chipset.
public struct ChipsetInfo: Sendable {
    /// "Realtek": the family in log lines and `--list-controllers`.
    public var vendor: StaticString
    /// The folder under the firmware directory: "rtl_bt", "intel", "brcm".
    public var directory: StaticString
    /// Where the files come from: "firmware-realtek (component non-free-firmware)".
    public var package: StaticString
    /// The package with a USB dongle's files ("" when no Debian package ships them).
    public var usbPackage: StaticString
    /// No file of the chipset is larger (a bigger one is refused unread).
    public var maximumFileSize: Int
    /// Set-up phase name for the silent-controller message: "firmware check", "firmware load".
    public var setupName: StaticString
    /// What a failed set-up is called in its log line: "firmware download failed".
    public var failureVerb: StaticString
    public var quirks: ChipsetQuirks

    public init(vendor: StaticString, directory: StaticString, package: StaticString, maximumFileSize: Int,
                setupName: StaticString, failureVerb: StaticString, quirks: ChipsetQuirks = ChipsetQuirks(),
                usbPackage: StaticString? = nil) {
        self.vendor = vendor
        self.directory = directory
        self.package = package
        self.usbPackage = usbPackage ?? package
        self.maximumFileSize = maximumFileSize
        self.setupName = setupName
        self.failureVerb = failureVerb
        self.quirks = quirks
    }
}
