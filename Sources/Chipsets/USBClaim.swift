import BLEHost

/// Which entry serves a USB dongle, and how it starts. `vendorClass`: its
/// device or interface 0 is vendor-specific FF/01/01 (not E0/01/01), which
/// Linux hands to a chipset by the vendor id alone (`usbVendorClass`), ahead
/// of any VID:PID row, as btusb does: a wildcard row's driver info wins.
public struct USBClaim: ChipsetQuestion {
    public let vendor: UInt16, product: UInt16, vendorClass: Bool
    public var start: USBStart? = nil
    public init(vendor: UInt16, product: UInt16, vendorClass: Bool = false) {
        self.vendor = vendor
        self.product = product
        self.vendorClass = vendorClass
    }
    public mutating func ask<D: ChipsetDriver>(_ chipset: D.Type) -> Bool {
        start = Self.start(D.self, vendor: vendor, product: product, vendorClass: vendorClass)
        return start != nil
    }

    static func start<D: ChipsetDriver>(_ chipset: D.Type, vendor: UInt16, product: UInt16, vendorClass: Bool) -> USBStart? {
        if vendorClass, let start = D.usbVendorClass(vendor: vendor) { return start }
        return D.usbStart(vendor: vendor, product: product)
    }
}

/// The chipset Linux hands a vendor's FF/01/01 dongles to by class alone (`usbVendorClass`).
public struct USBVendorClassClaim: ChipsetQuestion {
    public let vendor: UInt16
    public var info: ChipsetInfo? = nil
    public init(vendor: UInt16) { self.vendor = vendor }
    public mutating func ask<D: ChipsetDriver>(_ chipset: D.Type) -> Bool {
        guard D.usbVendorClass(vendor: vendor) != nil else { return false }
        info = D.info
        return true
    }
}
