import BLEHost

/// One chipset: everything the program knows about a family of
/// controllers that needs a set-up before the host's bring-up. A chipset is
/// one folder of this target (its USB IDs, how Read Local Version names it, its
/// sans-IO set-up steps, the files it needs and the Debian package that ships
/// them, its quirks); `ChipsetTable` lists them, one line each. Nothing outside a chipset's
/// file names a vendor: `VendorSetup`, the run loop, `--list-controllers` and
/// the error messages ask the table (docs/ARCHITECTURE.md, "Adding a chipset").
///
/// Like BTstack's `btstack_chipset_t` and Bumble's `drivers/` registry, but
/// static: Embedded Swift has no existentials, so the table is a type (one
/// `ChipsetEntry` per chipset, holding its set-up state) that a `ChipsetVisitor` or a
/// `ChipsetQuestion` walks by index.
public protocol Chipset {
    init()
    /// What the table says about the chipset (names, files, quirks).
    static var info: ChipsetInfo { get }
    /// How a USB dongle with this VID:PID starts, nil when it is not this chipset's.
    static func usbStart(vendor: UInt16, product: UInt16) -> USBStart?
    /// How a USB dongle of this vendor starts when its interface 0 is vendor-specific
    /// FF/01/01 and no chipset claims its VID:PID (Linux btusb's vendor+class wildcard
    /// rows: `USB_VENDOR_AND_INTERFACE_INFO(vid, 0xff, 0x01, 0x01)`); nil: not by class.
    static func usbVendorClass(vendor: UInt16) -> USBStart?
    /// What `--list-controllers` shows for a dongle of this chipset: the model
    /// and the file a typical unit needs (under `info.directory`); false when unknown.
    static func usbModel<let n: Int>(vendor: UInt16, product: UInt16, model: inout FixedBytes<n>, file: inout FixedBytes<n>) -> Bool
    /// What `--list-controllers` shows for the board's own UART before its chip
    /// answers: the board's chip `variant` (0, 1, … for a board sold with
    /// several) and its file's candidate names; false when none.
    static func boardFiles(board: Capacity.ChipsetText, variant: Int, model: inout Capacity.ChipsetText, request: inout FileRequest) -> Bool
    /// Read Local Version of a controller (after the probe's Reset): this chipset's?
    static func recognises(_ version: LocalVersion, context: ChipsetContext) -> Bool

    /// From HCI Reset on (a USB dongle whose VID:PID says `.fromReset`).
    mutating func start(context: ChipsetContext, into packet: inout Capacity.HCIPacket) -> SetupStep
    /// After the probe's Reset and Read Local Version (`event`: its Command Complete).
    mutating func resume(afterProbe event: UnsafeRawBufferPointer, context: ChipsetContext, into packet: inout Capacity.HCIPacket) -> SetupStep
    mutating func handle(event: UnsafeRawBufferPointer, into packet: inout Capacity.HCIPacket) -> SetupStep
    mutating func provide(firmware: UnsafeRawBufferPointer, companion: UnsafeRawBufferPointer, into packet: inout Capacity.HCIPacket) -> SetupStep
    /// `pause` ms after a `.wait` passed without an answer (a chip restarting).
    mutating func resume(into packet: inout Capacity.HCIPacket) -> SetupStep
    /// A clean stop (`ControllerSetup.shutdown`): the chipset's last command,
    /// its answer through `handle`; `.done` for none (the default).
    mutating func shutdown(into packet: inout Capacity.HCIPacket) -> SetupStep
    var pause: UInt64 { get }
    /// How long the next answer may take (ms).
    var answerTimeout: UInt64 { get }
    /// USB only: the command goes on bulk OUT / bulk IN carries the events.
    var commandOnBulk: Bool { get }
    var eventsOnBulk: Bool { get }
    /// The UART rate the port must be at from now on (0: leave it).
    var portBaudRate: UInt32 { get }
    /// The controller reported an address its whole model shares: not to be used as the public one.
    var sharedDefaultAddress: BDAddress? { get }

    /// "Realtek RTL8761B/BU", "Intel AX210", "Broadcom BCM4345C0": for log lines.
    func writeLabel<let n: Int>(into out: inout FixedBytes<n>)
    /// The files `.needFiles` asks for, by name under `info.directory`.
    func files(_ request: inout FileRequest)
    /// Why the set-up failed (after `.failed`).
    var failure: ListedText { get }
    /// More about the failure, printed after `failure` when not empty (e.g. the
    /// file the controller needs). May carry what the controller reported: the
    /// board escapes it.
    func writeFailureDetail<let n: Int>(into out: inout FixedBytes<n>)
    /// After `.done`: what was loaded, for the log (`.none`: nothing to say).
    func writeSummary<let n: Int>(into out: inout FixedBytes<n>) -> SummaryLevel
}

public extension Chipset {
    static func usbVendorClass(vendor: UInt16) -> USBStart? { nil }
    static func usbModel<let n: Int>(vendor: UInt16, product: UInt16, model: inout FixedBytes<n>, file: inout FixedBytes<n>) -> Bool { false }
    static func boardFiles(board: Capacity.ChipsetText, variant: Int, model: inout Capacity.ChipsetText, request: inout FileRequest) -> Bool { false }
    mutating func start(context: ChipsetContext, into packet: inout Capacity.HCIPacket) -> SetupStep { .done }
    mutating func resume(into packet: inout Capacity.HCIPacket) -> SetupStep { .wait }
    mutating func shutdown(into packet: inout Capacity.HCIPacket) -> SetupStep { .done }
    var pause: UInt64 { 0 }
    var commandOnBulk: Bool { false }
    var eventsOnBulk: Bool { false }
    var portBaudRate: UInt32 { 0 }
    var sharedDefaultAddress: BDAddress? { nil }
    func writeFailureDetail<let n: Int>(into out: inout FixedBytes<n>) {}
}
