import BLEHost
import Chipsets

/// `--list-controllers usb:VID:PID …`: will a dongle work, asked before buying
/// (it need not be plugged in). For each: the chipset the table gives it, the
/// model, the file a typical unit needs and the Debian package that ships it,
/// or why it is not served; for a vendor whose dongles Linux takes by their
/// vendor-specific FF/01/01 interface, that it depends on the class. With
/// --json, one object per dongle (docs/COMMAND-LINE.md).
/// The answer is written straight into one buffer from the table's own texts
/// (StaticStrings and fixed bytes): no String per field, no answer of Strings
/// to copy and release.
/// (`Outlined.dongleQuery` prints one `Answer` per dongle given.)
enum DongleQuery {
    struct Answer {
        let vendor: UInt16, product: UInt16
        /// The family: a table's vendor name (printed in lower case) or a not-served one's.
        var chipset: StaticString? = nil
        var served = false
        /// The chipset's model and file (`found.info.directory`/`found.file`).
        var found: USBModel? = nil
        /// The chipset an FF/01/01 interface of this vendor goes to (Linux's vendor+class rows).
        var byClass: StaticString? = nil
        var reason: StaticString? = nil
        /// Claimed only by its vendor's FF/01/01 class: served when that is its interface 0's class.
        var dependsOnClass = false

        init(vendor: UInt16, product: UInt16) {
            self.vendor = vendor
            self.product = product
            var classClaim = USBVendorClassClaim(vendor: vendor)
            if let index = ChipsetTable.first(&classClaim), let info = ChipsetTable.info(index) { byClass = info.vendor }
            // By VID:PID (any class); else by the vendor's FF/01/01 class.
            found = ChipsetTable.usbModel(vendor: vendor, product: product)
            if found == nil {
                found = ChipsetTable.usbModel(vendor: vendor, product: product, vendorClass: true)
                dependsOnClass = found != nil
            }
            if let found {
                chipset = found.info.vendor
                served = true
            } else if let listed = NotServed.reason(vendor: vendor, product: product) {
                chipset = listed.family
                reason = listed.why
                served = sameBytes(staticText(listed.family), "csr")  // a standard controller: driven without a set-up
            } else {
                reason = "no chipset of the table claims it: driven as a standard controller when its class is E0/01/01 and it needs no firmware"
            }
        }

        /// The Debian package's name (without "(component …)"); nil when none ships the file.
        var package: UnsafeRawBufferPointer? {
            guard let found, found.info.usbPackage.utf8CodeUnitCount > 0 else { return nil }
            let all = UnsafeRawBufferPointer(start: found.info.usbPackage.utf8Start, count: found.info.usbPackage.utf8CodeUnitCount)
            return UnsafeRawBufferPointer(rebasing: all[..<(all.firstIndex(of: 0x20) ?? all.count)])
        }

        /// Its line (or JSON object) to standard output. Out of line: the answer is read in place.
        @inline(never) func print(json: Bool) {
            var text = BuiltText.Builder()
            if json { putJSON(&text) } else { putLine(&text) }
            text.bytes.withUnsafeBytes { writeLine(1, nil, $0) }
        }

        func putLine(_ text: inout BuiltText.Builder) {
            text.appendInterpolation(hex4: vendor)
            text.appendLiteral(":")
            text.appendInterpolation(hex4: product)
            text.appendLiteral("  ")
            if let chipset {
                text.appendInterpolation(lower: chipset)
                if let found {
                    text.appendLiteral(" ")
                    text.appendInterpolation(found.model)
                }
                text.appendLiteral("; ")
            }
            text.appendLiteral(dependsOnClass ? "served when its interface 0 is vendor-specific FF/01/01"
                               : served ? "served" : "not served")
            if let found {
                text.appendLiteral("; firmware ")
                text.appendInterpolation(found.info.directory)
                text.appendLiteral("/")
                text.appendInterpolation(found.file)
                text.appendLiteral(" (")
                if let package {
                    text.appendLiteral("Debian package ")
                    text.appendInterpolation(bytes: package)
                    text.appendLiteral(")")
                } else {
                    text.appendLiteral("no Debian package ships it: from the vendor's Windows driver)")
                }
            } else if served {
                text.appendLiteral("; no firmware needed")
            }
            if let reason {
                text.appendLiteral("; ")
                text.appendInterpolation(reason)
            }
            // A VID:PID row of its own decides whatever the interface class (btusb's quirks
            // table wins over its id table), so the vendor's class note is for the others only.
            if let byClass, chipset == nil || dependsOnClass {
                text.appendLiteral("; Linux takes this vendor's dongles by interface class: with a vendor-specific FF/01/01 interface 0 it is ")
                text.appendInterpolation(lower: byClass)
                text.appendLiteral("'s, whatever the product id")
            }
        }

        /// One object: the fields in their order, absent ones as null.
        func putJSON(_ text: inout BuiltText.Builder) {
            text.appendLiteral("{\"vid\":\"")
            text.appendInterpolation(hex4: vendor)
            text.appendLiteral("\",\"pid\":\"")
            text.appendInterpolation(hex4: product)
            text.appendLiteral("\",\"chipset\":")
            text.appendJSON(chipset, lower: true)
            text.appendLiteral(",\"served\":")
            text.appendInterpolation(served)
            text.appendLiteral(",\"model\":")
            if let found {
                found.model.withBytes { text.appendJSON($0) }
                text.appendLiteral(",\"firmware\":")
                found.file.withBytes { file in
                    text.appendJSON(UnsafeRawBufferPointer(start: found.info.directory.utf8Start, count: found.info.directory.utf8CodeUnitCount),
                                    more: file)
                }
            } else {
                text.appendLiteral("null,\"firmware\":null")
            }
            text.appendLiteral(",\"package\":")
            text.appendJSON(package)
            text.appendLiteral(",\"by_class\":")
            text.appendJSON(byClass, lower: true)
            text.appendLiteral(",\"reason\":")
            text.appendJSON(reason)
            text.appendLiteral(",\"depends_on_class\":")
            text.appendInterpolation(dependsOnClass)
            text.appendLiteral("}")
        }
    }

    /// "realtek", "broadcom": the table's family in lower case. Out of line: three callers.
    @inline(never) static func family(_ info: ChipsetInfo) -> String { staticText(info.vendor).lowercasedASCII() }
}

extension BuiltText.Builder {
    /// `\(lower: name)`: a table's ASCII name in lower case ("Realtek" as "realtek", `DongleQuery.family`).
    @inline(never)
    mutating func appendInterpolation(lower name: StaticString) {
        for index in 0..<name.utf8CodeUnitCount {
            let byte = name.utf8Start[index]
            bytes.append(byte >= 65 && byte <= 90 ? byte + 32 : byte)
        }
    }

    @inline(__always)
    mutating func appendJSON(_ text: StaticString?, lower: Bool = false) {
        appendJSON(text.map { UnsafeRawBufferPointer(start: $0.utf8Start, count: $0.utf8CodeUnitCount) }, lower: lower)
    }

    /// A JSON string of `text` (and `more`, after a "/"), as `jsonString` writes
    /// it; null for none. Plain printable ASCII is copied; anything else goes
    /// through `jsonString` itself.
    @inline(never)
    mutating func appendJSON(_ text: UnsafeRawBufferPointer?, more: UnsafeRawBufferPointer? = nil, lower: Bool = false) {
        guard let text else { return appendLiteral("null") }
        bytes.append(0x22)
        appendJSONBody(text, lower: lower)
        if let more {
            bytes.append(0x2F)
            appendJSONBody(more, lower: false)
        }
        bytes.append(0x22)
    }

    @inline(never)
    mutating func appendJSONBody(_ piece: UnsafeRawBufferPointer, lower: Bool) {
        var plain = true
        for byte in piece where byte < 0x20 || byte >= 0x7F || byte == 0x22 || byte == 0x5C { plain = false }
        guard plain else {
            let quoted = jsonString(String(repairingUTF8: piece))
            return withBytes(quoted) { bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer($0)[1 ..< $0.count - 1])) }
        }
        for byte in piece { bytes.append(lower && byte >= 65 && byte <= 90 ? byte + 32 : byte) }
    }
}
