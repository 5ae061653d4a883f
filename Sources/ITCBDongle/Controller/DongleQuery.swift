import BLEHost
import Chipsets

/// `--list-controllers usb:VID:PID …`: will a dongle work, asked before buying
/// (it need not be plugged in). For each: the chipset the table gives it, the
/// model, the file a typical unit needs and the Debian package that ships it,
/// or why it is not served; for a vendor whose dongles Linux takes by their
/// vendor-specific FF/01/01 interface, that it depends on the class. With
/// --json, one object per dongle (docs/COMMAND-LINE.md).
enum DongleQuery {
    static func answer(_ dongles: [(vendor: UInt16, product: UInt16)], json: Bool) -> Int32 {
        for (vendor, product) in dongles {
            let answer = Answer(vendor: vendor, product: product)
            printLine(json ? answer.json : answer.line)
        }
        return Exit.success
    }

    struct Answer {
        let vendor: UInt16, product: UInt16
        var chipset: String? = nil
        var served = false
        var model: String? = nil
        var firmware: String? = nil
        var package: String? = nil
        /// The chipset an FF/01/01 interface of this vendor goes to (Linux's vendor+class rows).
        var byClass: String? = nil
        var reason: String? = nil
        /// Claimed only by its vendor's FF/01/01 class: served when that is its interface 0's class.
        var dependsOnClass = false

        init(vendor: UInt16, product: UInt16) {
            self.vendor = vendor
            self.product = product
            var classClaim = USBVendorClassClaim(vendor: vendor)
            if let index = ChipsetTable.first(&classClaim), let info = ChipsetTable.info(index) { byClass = family(info) }
            // By VID:PID (any class); else by the vendor's FF/01/01 class.
            var found = ChipsetTable.usbModel(vendor: vendor, product: product)
            if found == nil {
                found = ChipsetTable.usbModel(vendor: vendor, product: product, vendorClass: true)
                dependsOnClass = found != nil
            }
            if let found {
                chipset = family(found.info)
                served = true
                model = text(found.model)
                firmware = built("\(found.info.directory)/\(text(found.file))")
                let shipped = staticText(found.info.usbPackage)
                package = shipped.isEmpty ? nil : String(shipped.prefix(beforeASCII: " "))
            } else if let listed = NotServed.reason(vendor: vendor, product: product) {
                chipset = staticText(listed.family)
                reason = staticText(listed.why)
                served = sameBytes(staticText(listed.family), "csr")  // a standard controller: driven without a set-up
            } else {
                reason = "no chipset of the table claims it: driven as a standard controller when its class is "
                    + "E0/01/01 and it needs no firmware"
            }
        }

        var id: String { built("\(hex4(vendor)):\(hex4(product))") }

        /// Built as bytes (BuiltText): String appends are inlined at every use.
        /// Out of line (as `json`): the answer is read in place, not copied.
        @inline(never) var line: String {
            var text: BuiltText = "\(hex4(vendor)):\(hex4(product))  "
            if let chipset, let model { text.append("\(chipset) \(model); ") } else if let chipset { text.append("\(chipset); ") }
            text.append(dependsOnClass ? "served when its interface 0 is vendor-specific FF/01/01"
                        : served ? "served" : "not served")
            if let firmware {
                text.append("; firmware \(firmware) (")
                if let package { text.append("Debian package \(package))") } else {
                    text.append("no Debian package ships it: from the vendor's Windows driver)")
                }
            } else if served {
                text.append("; no firmware needed")
            }
            if let reason { text.append("; \(reason)") }
            // A VID:PID row of its own decides whatever the interface class (btusb's quirks
            // table wins over its id table), so the vendor's class note is for the others only.
            if let byClass, chipset == nil || dependsOnClass {
                text.append("; Linux takes this vendor's dongles by interface class: with a vendor-specific FF/01/01 interface 0 it is \(byClass)'s, whatever the product id")
            }
            return text.string
        }

        /// Written as one literal: no array of keys and values built at run time.
        @inline(never) var json: String {
            let text: BuiltText = "{\"vid\":\"\(hex4(vendor))\",\"pid\":\"\(hex4(product))\",\"chipset\":\(jsonOrNull(chipset)),\"served\":\(jsonBool(served)),\"model\":\(jsonOrNull(model)),\"firmware\":\(jsonOrNull(firmware)),\"package\":\(jsonOrNull(package)),\"by_class\":\(jsonOrNull(byClass)),\"reason\":\(jsonOrNull(reason)),\"depends_on_class\":\(jsonBool(dependsOnClass))}"
            return text.string
        }
    }

    /// "realtek", "broadcom": the table's family in lower case. Out of line: three callers.
    @inline(never) static func family(_ info: ChipsetInfo) -> String { staticText(info.vendor).lowercasedASCII() }
}

/// A JSON string, or null.
@inline(never)
func jsonOrNull(_ s: String?) -> String { s.map(jsonString) ?? "null" }

func jsonBool(_ b: Bool) -> StaticString { b ? "true" : "false" }
