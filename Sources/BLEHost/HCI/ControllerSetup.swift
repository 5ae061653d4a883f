public protocol ControllerSetup: ~Copyable {
    /// First step; `.done` at once when there is nothing to set up.
    mutating func begin() -> SetupStep
    /// One HCI event (without the indicator byte).
    mutating func handle(event: UnsafeRawBufferPointer) -> SetupStep
    /// The files asked for by `.needFiles` (an empty companion means none);
    /// the caller keeps both alive until `.done` or `.failed`.
    mutating func provide(firmware: UnsafeRawBufferPointer, companion: UnsafeRawBufferPointer) -> SetupStep
    /// The command of the last `.send`.
    mutating func command(into packet: inout Capacity.HCIPacket)
    /// How long the next answer may take (ms); counted from the last one.
    var answerTimeout: UInt64 { get }
    /// After a `.wait`: call `resume()` this many ms later unless an event
    /// comes first (a chip that restarts without a word); 0 for never.
    var pause: UInt64 { get }
    /// The pause passed.
    mutating func resume() -> SetupStep
    /// A clean stop, after the host's own (its HCI Reset answered), before the
    /// board releases the controller: the set-up's last command (`.send`,
    /// then its answer through `handle` ends it with `.done`), or `.done` at
    /// once when it has none.
    mutating func shutdown() -> SetupStep
}

extension ControllerSetup where Self: ~Copyable {
    public var pause: UInt64 { 0 }
    public mutating func resume() -> SetupStep { .wait }
    public mutating func shutdown() -> SetupStep { .done }
}
