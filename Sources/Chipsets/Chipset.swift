import BLEHost

/// One chipset driver: everything the program knows about a family of
/// controllers that needs a set-up before the host's bring-up. A chipset is
/// one file of this target (its USB IDs, how Read Local Version names it, its
/// sans-IO set-up steps, the files it needs and the Debian package that ships
/// them, its quirks); `ChipsetTable` lists them. Nothing outside a chipset's
/// file names a vendor: `VendorSetup`, the run loop, `--list-controllers` and
/// the error messages ask the table (docs/ARCHITECTURE.md, "Adding a chipset").
///
/// Like BTstack's `btstack_chipset_t` and Bumble's `drivers/` registry, but
/// static: Embedded Swift has no existentials, so the table dispatches with a
/// `ChipsetVisitor` over one stored driver per chipset.
public protocol ChipsetDriver {
    init()
    /// What the table says about the chipset (names, files, quirks).
    static var info: ChipsetInfo { get }
    /// How a USB dongle with this VID:PID starts, nil when it is not this chipset's.
    static func usbStart(vendor: UInt16, product: UInt16) -> USBStart?
    /// What `--list-controllers` shows for a dongle of this chipset: the model
    /// and the file a typical unit needs (under `info.directory`); false when unknown.
    static func usbModel<let n: Int>(vendor: UInt16, product: UInt16, model: inout FixedBytes<n>, file: inout FixedBytes<n>) -> Bool
    /// Read Local Version of a controller (after the probe's Reset): this chipset's?
    static func recognises(_ version: LocalVersion, context: ChipsetContext) -> Bool

    /// From HCI Reset on (a USB dongle whose VID:PID says `.fromReset`).
    mutating func start(context: ChipsetContext, into packet: inout HCIPacket) -> SetupStep
    /// After the probe's Reset and Read Local Version (`event`: its Command Complete).
    mutating func resume(afterProbe event: UnsafeRawBufferPointer, context: ChipsetContext, into packet: inout HCIPacket) -> SetupStep
    mutating func handle(event: UnsafeRawBufferPointer, into packet: inout HCIPacket) -> SetupStep
    mutating func provide(firmware: UnsafeRawBufferPointer, companion: UnsafeRawBufferPointer, into packet: inout HCIPacket) -> SetupStep
    /// `pause` ms after a `.wait` passed without an answer (a chip restarting).
    mutating func resume(into packet: inout HCIPacket) -> SetupStep
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
    var failure: StaticString { get }
    /// After `.done`: what was loaded, for the log (`.none`: nothing to say).
    func writeSummary<let n: Int>(into out: inout FixedBytes<n>) -> SummaryLevel
}

/// A loader that takes one file and whose steps are the driver's as they are.
public protocol SingleFileLoader {
    mutating func handle(event: UnsafeRawBufferPointer, into packet: inout HCIPacket) -> SetupStep
    mutating func provide(firmware: UnsafeRawBufferPointer, into packet: inout HCIPacket) -> SetupStep
    mutating func resume(into packet: inout HCIPacket) -> SetupStep
    var pause: UInt64 { get }
}

/// A chipset driver whose events, file and pauses go straight to its loader (Broadcom's, MediaTek's).
public protocol LoaderDriver: ChipsetDriver {
    associatedtype Loader: SingleFileLoader
    var loader: Loader { get set }
}

public extension LoaderDriver {
    mutating func handle(event: UnsafeRawBufferPointer, into packet: inout HCIPacket) -> SetupStep {
        loader.handle(event: event, into: &packet)
    }

    mutating func provide(firmware: UnsafeRawBufferPointer, companion: UnsafeRawBufferPointer, into packet: inout HCIPacket) -> SetupStep {
        loader.provide(firmware: firmware, into: &packet)
    }

    mutating func resume(into packet: inout HCIPacket) -> SetupStep { loader.resume(into: &packet) }

    var pause: UInt64 { loader.pause }
}

public extension ChipsetDriver {
    static func usbModel<let n: Int>(vendor: UInt16, product: UInt16, model: inout FixedBytes<n>, file: inout FixedBytes<n>) -> Bool { false }
    mutating func start(context: ChipsetContext, into packet: inout HCIPacket) -> SetupStep { .done }
    mutating func resume(into packet: inout HCIPacket) -> SetupStep { .wait }
    var pause: UInt64 { 0 }
    var commandOnBulk: Bool { false }
    var eventsOnBulk: Bool { false }
    var portBaudRate: UInt32 { 0 }
    var sharedDefaultAddress: BDAddress? { nil }
}

/// How a chipset's USB dongle starts.
public enum USBStart: Equatable {
    /// Reset and Read Local Version first; the chipset takes over when it recognises the answer.
    case probe
    /// The chipset's own set-up from HCI Reset on (a boot loader that does not answer Read Local Version).
    case fromReset
}

public enum SummaryLevel: Equatable { case none, info, debug }

/// The table's data for one chipset.
public struct ChipsetInfo: Sendable {
    /// "Realtek": the family in log lines and `--list-controllers`.
    public var vendor: StaticString
    /// The folder under the firmware directory: "rtl_bt", "intel", "brcm".
    public var directory: StaticString
    /// Where the files come from: "firmware-realtek (component non-free-firmware)".
    public var package: StaticString
    /// No file of the chipset is larger (a bigger one is refused unread).
    public var maximumFileSize: Int
    /// Set-up phase name for the silent-controller message: "firmware check", "firmware load".
    public var setupName: StaticString
    /// What a failed set-up is called in its log line: "firmware download failed".
    public var failureVerb: StaticString
    public var quirks: ChipsetQuirks

    public init(vendor: StaticString, directory: StaticString, package: StaticString, maximumFileSize: Int,
                setupName: StaticString, failureVerb: StaticString, quirks: ChipsetQuirks = ChipsetQuirks()) {
        self.vendor = vendor
        self.directory = directory
        self.package = package
        self.maximumFileSize = maximumFileSize
        self.setupName = setupName
        self.failureVerb = failureVerb
        self.quirks = quirks
    }
}

/// Work-arounds as data: a clone that needs one is a line in its chipset's
/// `info`, not a branch in the transport or the driver.
public struct ChipsetQuirks: Equatable, Sendable {
    /// A USB dongle works from ROM: a missing firmware file is a warning and
    /// the controller runs as it is (false: an error, exit 4, naming the file
    /// and the package).
    public var runsFromROMOverUSB: Bool
    /// Probed on every UART, --firmware-dir given or not: the chip has no
    /// other identity (the Raspberry Pi's own radio); other chipsets are
    /// probed on a UART or TCP only when --firmware-dir is given.
    public var probedOnEveryUART: Bool
    /// Over USB the set-up's vendor commands are answered through control IN
    /// and its register commands are vendor control requests (`USBVendorControl`):
    /// the USB board does both on the steps' behalf.
    public var vendorControlOverUSB: Bool
    /// The chip has its own reset (MediaTek's Bluetooth subsystem reset): a
    /// controller that stops answering gets it (`ChipsetContext.resetFirst`)
    /// before the board resets its USB port.
    public var ownReset: Bool
    public init(runsFromROMOverUSB: Bool = false, probedOnEveryUART: Bool = false, vendorControlOverUSB: Bool = false,
                ownReset: Bool = false) {
        self.runsFromROMOverUSB = runsFromROMOverUSB
        self.probedOnEveryUART = probedOnEveryUART
        self.vendorControlOverUSB = vendorControlOverUSB
        self.ownReset = ownReset
    }
}

/// What `.needFiles` asks for: up to two candidate names for the firmware
/// (the first that exists is read, as Linux tries them) and an optional companion.
public struct FileRequest {
    public var firmware: ChipsetText
    public var alternative: ChipsetText
    public var companion: ChipsetText
    public var companionRequired: Bool
    /// No firmware file found: the chipset goes on without one (from ROM).
    public var optional: Bool
    public init() {
        firmware = FixedBytes()
        alternative = FixedBytes()
        companion = FixedBytes()
        companionRequired = false
        optional = false
    }
}

/// A name or a log line a chipset writes (one size: one specialisation of each writer).
public typealias ChipsetText = FixedBytes<128>

/// Where the controller is: what a chipset may need to know about its transport.
public struct ChipsetContext: Equatable {
    public var overUSB = false
    public var usbVendor: UInt16 = 0
    public var usbProduct: UInt16 = 0
    /// A UART (not TCP, not USB): its current rate, and the rate the controller may be switched to (0: none).
    public var uartBaud: UInt32 = 0
    public var uartTargetBaud: UInt32 = 0
    /// Every chipset is asked (--firmware-dir given); else only those probed on every UART.
    public var probeEveryChipset = true
    /// The controller stopped answering in the last session: a chipset with its
    /// own reset (`ChipsetQuirks.ownReset`) runs it before its set-up.
    public var resetFirst = false
    public init() {}
}

/// Read Local Version Information's return parameters.
public struct LocalVersion: Equatable {
    public var hciVersion: UInt8
    public var hciRevision: UInt16
    public var lmpVersion: UInt8
    public var manufacturer: UInt16
    public var lmpSubversion: UInt16

    /// From the parameters after the status byte; nil when short.
    public init?(_ rest: UnsafeRawBufferPointer) {
        guard rest.count >= 8 else { return nil }
        hciVersion = rest[0]
        hciRevision = UInt16(rest[1]) | UInt16(rest[2]) << 8
        lmpVersion = rest[3]
        manufacturer = UInt16(rest[4]) | UInt16(rest[5]) << 8
        lmpSubversion = UInt16(rest[6]) | UInt16(rest[7]) << 8
    }

    /// From a Command Complete event for Read Local Version with success; nil otherwise.
    public init?(commandComplete event: UnsafeRawBufferPointer) {
        guard event.count >= 6, event[0] == HCIEventCode.commandComplete,
              UInt16(event[3]) | UInt16(event[4]) << 8 == HCIOpcode.readLocalVersion, event[5] == HCIStatus.success
        else { return nil }
        self.init(UnsafeRawBufferPointer(rebasing: event[6...]))
    }
}

/// An operation on one chipset driver of the table.
public protocol ChipsetVisitor {
    associatedtype Result
    mutating func visit<D: ChipsetDriver>(_ driver: inout D) -> Result
}

/// A question to one chipset of the table that needs no driver state (its USB IDs, its recognition, its data).
public protocol ChipsetQuestion {
    associatedtype Result
    mutating func ask<D: ChipsetDriver>(_ chipset: D.Type) -> Result
}

/// THE TABLE. Adding a chipset: its file, a stored driver here and its line in
/// `visit` and in `ask`.
public struct ChipsetTable {
    var realtek = RealtekDriver()
    var intel = IntelDriver()
    var broadcom = BroadcomDriver()
    var mediatek = MediaTekDriver()

    public static let count = 4

    public init() {}

    /// `visitor` on entry `index` (0 ..< count); nil past the end. The order is
    /// the probe's: the first chipset that recognises a controller takes it.
    public mutating func visit<V: ChipsetVisitor>(_ index: Int, _ visitor: inout V) -> V.Result? {
        switch index {
        case 0: visitor.visit(&realtek)
        case 1: visitor.visit(&intel)
        case 2: visitor.visit(&broadcom)
        case 3: visitor.visit(&mediatek)
        default: nil
        }
    }

    /// `question` to entry `index`'s chipset; nil past the end.
    public static func ask<Q: ChipsetQuestion>(_ index: Int, _ question: inout Q) -> Q.Result? {
        switch index {
        case 0: question.ask(RealtekDriver.self)
        case 1: question.ask(IntelDriver.self)
        case 2: question.ask(BroadcomDriver.self)
        case 3: question.ask(MediaTekDriver.self)
        default: nil
        }
    }

    /// The first entry whose chipset answers `question` with true, or nil.
    public static func first<Q: ChipsetQuestion>(_ question: inout Q) -> Int? where Q.Result == Bool {
        for index in 0..<count where ask(index, &question) == true { return index }
        return nil
    }
}

/// What the board logs about the active chipset, written without allocation.
public struct ChipsetDescription {
    public var info: ChipsetInfo
    /// "Realtek RTL8761B/BU".
    public var label = ChipsetText()
    public var request = FileRequest()
    public var failure: StaticString
    public var summaryLevel: SummaryLevel
    public var summary = ChipsetText()
}

struct Describe: ChipsetVisitor {
    mutating func visit<D: ChipsetDriver>(_ driver: inout D) -> ChipsetDescription {
        var description = ChipsetDescription(info: D.info, failure: driver.failure, summaryLevel: .none)
        driver.writeLabel(into: &description.label)
        driver.files(&description.request)
        description.summaryLevel = driver.writeSummary(into: &description.summary)
        return description
    }
}

/// A USB dongle's chipset as `--list-controllers` shows it: its model and the
/// file a typical unit needs (under `info.directory`).
public struct USBModel {
    public var info: ChipsetInfo
    public var model = ChipsetText()
    public var file = ChipsetText()
}

struct FindUSBModel: ChipsetQuestion {
    let vendor: UInt16, product: UInt16
    var found: USBModel? = nil
    mutating func ask<D: ChipsetDriver>(_ chipset: D.Type) -> Bool {
        var model = USBModel(info: D.info)
        guard D.usbModel(vendor: vendor, product: product, model: &model.model, file: &model.file) else { return false }
        found = model
        return true
    }
}

extension ChipsetTable {
    /// The chipset and model of a USB dongle, nil when no entry knows it.
    public static func usbModel(vendor: UInt16, product: UInt16) -> USBModel? {
        var find = FindUSBModel(vendor: vendor, product: product)
        return first(&find) == nil ? nil : find.found
    }
}

/// A chipset's quirks, asked of the table without a driver.
public struct QuirksOf: ChipsetQuestion {
    public init() {}
    public mutating func ask<D: ChipsetDriver>(_ chipset: D.Type) -> ChipsetQuirks { D.info.quirks }
}

/// Which entry serves a USB dongle, and how it starts.
public struct USBClaim: ChipsetQuestion {
    public let vendor: UInt16, product: UInt16
    public var start: USBStart? = nil
    public init(vendor: UInt16, product: UInt16) {
        self.vendor = vendor
        self.product = product
    }
    public mutating func ask<D: ChipsetDriver>(_ chipset: D.Type) -> Bool {
        start = D.usbStart(vendor: vendor, product: product)
        return start != nil
    }
}

// Number formatting for log text written without allocation.

func appendDecimal<let n: Int>(_ value: UInt32, to out: inout FixedBytes<n>) {
    var digits = InlineArray<10, UInt8>(repeating: 0)
    var count = 0
    var v = value
    repeat {
        digits[count] = UInt8(ascii: "0") + UInt8(v % 10)
        v /= 10
        count += 1
    } while v > 0
    while count > 0 {
        count -= 1
        _ = out.append(digits[count])
    }
}

func appendHex<let n: Int>(_ value: UInt32, digits: Int, to out: inout FixedBytes<n>) {
    var shift = (digits - 1) * 4
    while shift >= 0 {
        let d = UInt8((value >> UInt32(shift)) & 0xF)
        _ = out.append(d < 10 ? UInt8(ascii: "0") + d : UInt8(ascii: "a") + d - 10)
        shift -= 4
    }
}

func appendHex4<let n: Int>(_ value: UInt16, to out: inout FixedBytes<n>) {
    appendHex(UInt32(value), digits: 4, to: &out)
}

func append<let n: Int>(_ text: StaticString, to out: inout FixedBytes<n>) {
    _ = out.append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
}
