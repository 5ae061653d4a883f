import BLEHost

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
