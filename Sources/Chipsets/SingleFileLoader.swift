import BLEHost

/// A loader that takes one file and whose steps are the driver's as they are.
public protocol SingleFileLoader {
    mutating func handle(event: UnsafeRawBufferPointer, into packet: inout Capacity.HCIPacket) -> SetupStep
    mutating func provide(firmware: UnsafeRawBufferPointer, into packet: inout Capacity.HCIPacket) -> SetupStep
    mutating func resume(into packet: inout Capacity.HCIPacket) -> SetupStep
    var pause: UInt64 { get }
}
