import BLEHost

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
