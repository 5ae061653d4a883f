import BLEHost

/// A chipset whose events, file and pauses go straight to its loader (Broadcom's, MediaTek's).
public protocol LoaderChipset: Chipset {
    associatedtype Loader: SingleFileLoader
    var loader: Loader { get set }
}

public extension LoaderChipset {
    mutating func handle(event: UnsafeRawBufferPointer, into packet: inout Capacity.HCIPacket) -> SetupStep {
        loader.handle(event: event, into: &packet)
    }

    mutating func provide(firmware: UnsafeRawBufferPointer, companion: UnsafeRawBufferPointer, into packet: inout Capacity.HCIPacket) -> SetupStep {
        loader.provide(firmware: firmware, into: &packet)
    }

    mutating func resume(into packet: inout Capacity.HCIPacket) -> SetupStep { loader.resume(into: &packet) }

    var pause: UInt64 { loader.pause }
}
