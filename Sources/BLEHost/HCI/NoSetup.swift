/// A controller that needs no set-up (the firmware's, a virtual one).
public struct NoSetup: ControllerSetup {
    public init() {}
    public mutating func begin() -> SetupStep { .done }
    public mutating func handle(event: UnsafeRawBufferPointer) -> SetupStep { .done }
    public mutating func provide(firmware: UnsafeRawBufferPointer, companion: UnsafeRawBufferPointer) -> SetupStep { .done }
    public mutating func command(into packet: inout Capacity.HCIPacket) {}
    public var answerTimeout: UInt64 { 0 }
}
