/// What a controller needs before the host's own bring-up (HCI Reset, reads,
/// LE set-up): a vendor's firmware download, or nothing. The driver runs it as
/// the first step of the controller's init sequence (BTstack's
/// HCI_INIT_CUSTOM_INIT with the chipset's next_command): HCI events in, one
/// command at a time out, the files asked of the board.
public enum SetupStep: Equatable {
    /// A command is ready: the driver sends it (`command(into:)`).
    case send
    /// Nothing to do until the next HCI event.
    case wait
    /// The board must read the files the set-up names and call `provide`.
    case needFiles
    /// The host may bring the controller up.
    case done
    /// The download cannot go on (the set-up says why).
    case failed
}

public protocol ControllerSetup: ~Copyable {
    /// First step; `.done` at once when there is nothing to set up.
    mutating func begin() -> SetupStep
    /// One HCI event (without the indicator byte).
    mutating func handle(event: UnsafeRawBufferPointer) -> SetupStep
    /// The files asked for by `.needFiles` (an empty companion means none);
    /// the caller keeps both alive until `.done` or `.failed`.
    mutating func provide(firmware: UnsafeRawBufferPointer, companion: UnsafeRawBufferPointer) -> SetupStep
    /// The command of the last `.send`.
    mutating func command(into packet: inout HCIPacket)
    /// How long the next answer may take (ms); counted from the last one.
    var answerTimeout: UInt64 { get }
    /// After a `.wait`: call `resume()` this many ms later unless an event
    /// comes first (a chip that restarts without a word); 0 for never.
    var pause: UInt64 { get }
    /// The pause passed.
    mutating func resume() -> SetupStep
}

extension ControllerSetup where Self: ~Copyable {
    public var pause: UInt64 { 0 }
    public mutating func resume() -> SetupStep { .wait }
}

/// A controller that needs no set-up (the firmware's, a virtual one).
public struct NoSetup: ControllerSetup {
    public init() {}
    public mutating func begin() -> SetupStep { .done }
    public mutating func handle(event: UnsafeRawBufferPointer) -> SetupStep { .done }
    public mutating func provide(firmware: UnsafeRawBufferPointer, companion: UnsafeRawBufferPointer) -> SetupStep { .done }
    public mutating func command(into packet: inout HCIPacket) {}
    public var answerTimeout: UInt64 { 0 }
}
