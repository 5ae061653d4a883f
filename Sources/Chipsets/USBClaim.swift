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
    public mutating func ask<C: Chipset>(_ chipset: C.Type) -> Bool {
        start = Self.start(C.self, vendor: vendor, product: product, vendorClass: vendorClass)
        return start != nil
    }

    /// Out of line, one per chipset: `USBClaim` and `FindUSBModel` share it.
    @inline(never) static func start<C: Chipset>(_ chipset: C.Type, vendor: UInt16, product: UInt16, vendorClass: Bool) -> USBStart? {
        if vendorClass, let start = C.usbVendorClass(vendor: vendor) { return start }
        return C.usbStart(vendor: vendor, product: product)
    }
}

/// The chipset Linux hands a vendor's FF/01/01 dongles to by class alone
/// (`usbVendorClass`): the entry `first` finds (its info: `ChipsetTable.info`).
public struct USBVendorClassClaim: ChipsetQuestion {
    public let vendor: UInt16
    public init(vendor: UInt16) { self.vendor = vendor }
    public func ask<C: Chipset>(_ chipset: C.Type) -> Bool { C.usbVendorClass(vendor: vendor) != nil }
}
