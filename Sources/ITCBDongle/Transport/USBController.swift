import BLEHost
import CLibUSB
import CLinux
import Chipsets

/// Class E0/01/01 (Bluetooth), or vendor class FF/01/01 on a dongle a chipset
/// of the table claims by VID:PID or by its vendor's class (Linux btusb's
/// `USB_VENDOR_AND_INTERFACE_INFO(vid, 0xff, 0x01, 0x01)` rows: Broadcom's
/// BCM20702 dongles show FF/01/01 on the device and on interface 0).
func isBluetoothClass(_ base: UInt8, _ sub: UInt8, _ proto: UInt8, vendor: UInt16, product: UInt16) -> Bool {
    guard sub == 0x01, proto == 0x01 else { return false }
    if base == 0xE0 { return true }
    var claim = USBClaim(vendor: vendor, product: product, vendorClass: true)
    return base == 0xFF && ChipsetTable.first(&claim) != nil
}

func libusbError(_ code: Int32) -> String { String(repairingCString: libusb_strerror(code)) }

/// Device enumeration, listing and opening (the USB transport's selection rules).
enum USBController {
    /// All devices on the system; `isBluetooth` marks the candidates.
    static func enumerate(_ context: OpaquePointer) -> (list: UnsafeMutablePointer<OpaquePointer?>?, devices: [USBCandidate]) {
        var list: UnsafeMutablePointer<OpaquePointer?>? = nil
        let count = libusb_get_device_list(context, &list)
        guard count > 0, let list else { return (nil, []) }
        var devices: [USBCandidate] = []
        for i in 0..<Int(count) {
            guard let device = list[i] else { continue }
            var descriptor = libusb_device_descriptor()
            guard libusb_get_device_descriptor(device, &descriptor) == 0 else { continue }
            // E0/01/01 on the device or interface 0; else FF/01/01 (`USBClaim.vendorClass`).
            var standard = descriptor.bDeviceClass == 0xE0 && descriptor.bDeviceSubClass == 1 && descriptor.bDeviceProtocol == 1
            var bluetooth = isBluetoothClass(descriptor.bDeviceClass, descriptor.bDeviceSubClass, descriptor.bDeviceProtocol,
                                             vendor: descriptor.idVendor, product: descriptor.idProduct)
            var config: UnsafeMutablePointer<libusb_config_descriptor>? = nil
            if libusb_get_active_config_descriptor(device, &config) == 0 || libusb_get_config_descriptor(device, 0, &config) == 0,
               let config {
                if config.pointee.bNumInterfaces > 0, config.pointee.interface[0].num_altsetting > 0 {
                    let interface = config.pointee.interface[0].altsetting[0]
                    standard = standard || (interface.bInterfaceClass == 0xE0 && interface.bInterfaceSubClass == 1
                                            && interface.bInterfaceProtocol == 1)
                    if isBluetoothClass(interface.bInterfaceClass, interface.bInterfaceSubClass, interface.bInterfaceProtocol,
                                        vendor: descriptor.idVendor, product: descriptor.idProduct) {
                        bluetooth = true
                    } else if descriptor.bDeviceClass == 0x00 || descriptor.bDeviceClass == 0xEF {
                        bluetooth = false  // class defined per interface, and interface 0 is not Bluetooth
                    }
                }
                libusb_free_config_descriptor(config)
            }
            // Into a word, a byte each (libusb gives at most 7): no array per device.
            var ports: UInt64 = 0
            let depth = withUnsafeMutableBytes(of: &ports) { libusb_get_port_numbers(device, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), 7) }
            devices.append(USBCandidate(
                device: device, vendor: descriptor.idVendor, product: descriptor.idProduct,
                bus: Int(libusb_get_bus_number(device)), ports: USBPorts.kept(ports, depth: Int(depth)), depth: max(Int(depth), 0),
                isBluetooth: bluetooth, vendorClass: bluetooth && !standard))
        }
        return (list, devices)
    }

    /// --list-controllers: one line per Bluetooth USB device.
    static func list(firmwareDirectory: String = "/lib/firmware", uart: String = "/dev/serial1") -> Int32 {
        var context: OpaquePointer? = nil
        guard libusb_init(&context) == 0, let context else {
            Log.error("cannot initialise libusb (is /dev/bus/usb available?)")
            return Exit.transport
        }
        defer { libusb_exit(context) }
        let (list, devices) = enumerate(context)
        defer { if let list { libusb_free_device_list(list, 1) } }
        // Counted, not filtered into an array of their own.
        var controllers = 0
        for c in devices where c.isBluetooth { controllers += 1 }
        let board = access(cPath(uart), F_OK) == 0
        if controllers == 0 {
            Log.warning("no USB Bluetooth controllers found (\(devices.count) USB devices seen)")
            if !board { return Exit.success }
        }
        // One buffer of NUL-ended cells, six a row: no String per cell, no array of them.
        var cells = BuiltText.Builder()
        cells.appendInterpolation("VID:PID\0PATH\0DRIVER\0FAMILY\0FIRMWARE\0PRODUCT\0" as StaticString)
        // Appended piece by piece: no BuiltText made per row to be appended.
        for c in devices where c.isBluetooth {
            cells.appendInterpolation(hex4: c.vendor)
            cells.appendLiteral(":")
            cells.appendInterpolation(hex4: c.product)
            cells.appendInterpolation("\0usb:" as StaticString)
            cells.appendInterpolation(c.path)
            cells.appendInterpolation(cellEnd)
            cells.appendInterpolation(c.kernelDriver ?? "(none)")
            cells.appendInterpolation(cellEnd)
            appendFirmwareColumns(&cells, c, firmwareDirectory)
            cells.appendInterpolation(escaped: c.productName)
            cells.appendInterpolation(cellEnd)
        }
        if board { appendBoardUART(&cells, firmwareDirectory, uart: uart) }
        cells.bytes.withUnsafeBytes { forEachTableLine($0, columns: 6) { writeLine(1, nil, $0) } }
        return Exit.success
    }

    /// Waits for a matching device (re-scanning once a second, or every 100 ms
    /// `within` a limit in ms); false when a SIGINT/SIGTERM asks us to stop
    /// instead, or the limit passed.
    static func waitForDevice(_ spec: TransportSpec, within limit: UInt64? = nil) -> Bool {
        let deadline = limit.map { monotonicMilliseconds() + $0 }
        while true {
            if let deadline, monotonicMilliseconds() >= deadline { return false }
            if Signals.sleep(limit == nil ? 1000 : 100) == .stop { return false }
            // A fresh context per scan: a long-lived one only learns of new devices
            // through hotplug events, which nobody would be handling here.
            var context: OpaquePointer? = nil
            guard libusb_init(&context) == 0, let context else { continue }
            let (list, devices) = enumerate(context)
            let present = devices.contains { $0.matches(spec) }
            if let list { libusb_free_device_list(list, 1) }
            libusb_exit(context)
            if present { return true }
        }
    }

    static func open(_ spec: TransportSpec, reset: Bool, quiet: Bool = false) throws(TransportError) -> Transport {
        var context: OpaquePointer? = nil
        guard libusb_init(&context) == 0, let context else { throw .unavailable("cannot initialise libusb") }
        let (list, devices) = enumerate(context)
        defer { if let list { libusb_free_device_list(list, 1) } }
        guard let candidate = devices.first(where: { $0.matches(spec) }) else {
            libusb_exit(context)
            // Appended into one builder (no BuiltText made per piece and copied in).
            var text = BuiltText.Builder()
            switch spec {
            case .usbID(let v, let p):
                text.appendLiteral("no USB device ")
                text.appendInterpolation(hex4: v)
                text.appendLiteral(":")
                text.appendInterpolation(hex4: p)
            case .usbPath(let b, let p):
                text.appendLiteral("no USB device at ")
                text.appendInterpolation(usbPath(bus: b, ports: p))
            default: text.appendLiteral("no USB Bluetooth dongle found")
            }
            text.appendLiteral("; seen: ")
            var seen = 0
            for device in devices where device.depth > 0 {
                if seen > 0 { text.appendLiteral(", ") }
                text.appendInterpolation(device.id)
                text.appendLiteral(" at ")
                text.appendInterpolation(device.path)
                if device.isBluetooth { text.appendLiteral(" (Bluetooth)") }
                seen += 1
            }
            if seen == 0 { text.appendLiteral("no USB devices") }
            text.appendLiteral(" (plug one in, or pick one with --transport usb:VID:PID)")
            throw .notFound(BuiltText(text))
        }
        do throws(TransportError) {
            return try USBTransport(context: context, candidate: candidate, reset: reset)
        } catch {
            libusb_exit(context)
            throw error
        }
    }
}

/// --list-controllers: chip family and whether its firmware is needed and
/// present, as the chipset table says (a VID:PID does not always name the
/// chip: the file a typical unit needs is shown, the exact one is named by the
/// controller at start), as two cells.
@inline(never)
func appendFirmwareColumns(_ cells: inout BuiltText.Builder, _ c: USBCandidate, _ directory: String) {
    guard let found = ChipsetTable.usbModel(vendor: c.vendor, product: c.product, vendorClass: c.vendorClass) else {
        return cells.appendInterpolation("-\0not needed\0" as StaticString)
    }
    var path = CPathBuffer()
    path.append(string: directory)
    path.append("/")
    let fileStart = path.count
    path.append(terminated: found.info.directory.utf8Start)
    path.append("/")
    found.file.withBytes { path.append($0) }
    let file = UnsafeRawBufferPointer(rebasing: path.bytes[fileStart...])
    let present: StaticString = access(path.pointer, R_OK) == 0 ? "present" : "MISSING"
    // The package's name, without "(component …)".
    let package = UnsafeRawBufferPointer(start: found.info.usbPackage.utf8Start, count: terminatedCount(found.info.usbPackage.utf8Start))
    let name = UnsafeRawBufferPointer(rebasing: package[..<(package.firstIndex(of: 0x20) ?? package.count)])
    // Into the cells piece by piece (no BuiltText made and copied in).
    cells.appendInterpolation(found.info.vendor)
    cells.appendInterpolation(cellEnd)
    cells.appendInterpolation(bytes: file)
    cells.appendLiteral(" (")
    cells.appendInterpolation(present)
    cells.appendLiteral(", ")
    if name.isEmpty { cells.appendLiteral("no Debian package ships it") } else { cells.appendInterpolation(bytes: name) }
    cells.appendLiteral(")")
    cells.appendInterpolation(cellEnd)
}

/// The board's own Bluetooth UART (Raspberry Pi OS names it /dev/serial1, or
/// the serial:PATH given), when there: probed at start, where its chip names
/// itself. With the board known from the device tree, the file the board's
/// chip needs: the first of Linux's names that is there (symbolic links
/// followed), for each chip the board is sold with. Its row's six cells.
@inline(never)
func appendBoardUART(_ cells: inout BuiltText.Builder, _ directory: String, uart: String) {
    cells.appendInterpolation("UART\0serial:" as StaticString)
    cells.appendInterpolation(uart)
    cells.appendInterpolation("\0(probed)\0" as StaticString)
    let board = DeviceTree.current.boardText
    // The chips' files joined as they come, into one text (no array of them joined after).
    var files = BuiltText.Builder()
    var family: StaticString = "-"
    var variant = 0
    var path = CPathBuffer(), first = CPathBuffer()
    while true {
        var query = BoardChipQuery(board: board, variant: variant)
        guard ChipsetTable.boardChip(&query) else { break }
        family = query.chip.info.vendor
        path.cut(to: 0)
        path.append(string: directory)
        path.append("/")
        path.append(terminated: query.chip.info.directory.utf8Start)
        path.append("/")
        let folder = path.count
        // The first name that is there, else the first name.
        var found = false, named = false
        first.cut(to: 0)
        query.chip.request.forEachCandidate { name in
            guard !found else { return }
            if !named { first.append(name) }
            named = true
            path.cut(to: folder)
            path.append(name)
            if access(path.pointer, R_OK) == 0 { found = true }
        }
        if !found {
            path.cut(to: folder)
            path.append(first.bytes)
        }
        if variant > 0 { files.appendLiteral(" or ") }
        files.appendInterpolation(query.chip.model)
        files.appendLiteral(": ")
        files.appendInterpolation(bytes: path.bytes)
        files.appendLiteral(found ? " (present)" : " (MISSING)")
        variant += 1
    }
    cells.appendInterpolation(family)
    cells.appendInterpolation(cellEnd)
    if variant == 0 {
        cells.appendInterpolation(directory)
        cells.appendLiteral("/brcm/BCM<chip>.hcd (the chip names it at start)")
    } else {
        cells.appendInterpolation(BuiltText(files))
    }
    cells.appendInterpolation("\0the board's Bluetooth UART\0" as StaticString)
}

/// The board's UART row as its six cells, as --list-controllers prints it (the unit tests').
func boardUARTRow(_ directory: String, path: String = "/dev/serial1") -> [String]? {
    guard access(cPath(path), F_OK) == 0 else { return nil }
    var cells = BuiltText.Builder()
    appendBoardUART(&cells, directory, uart: path)
    return cells.bytes.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(repairingUTF8: $0) }
}

/// Rows of `cells` (`columns` a row) as `forEachTableLine` lays them out (the unit tests').
func columnLines(_ cells: [String], columns: Int, _ line: (String) -> Void) {
    var table: [UInt8] = []
    for cell in cells { table += utf8Array(cell) + [0] }
    table.withUnsafeBytes { forEachTableLine($0, columns: columns) { line(String(repairingUTF8: $0)) } }
}

/// The chipset family, model and typical firmware file (under the firmware directory) of a USB dongle.
func firmwareGuess(vendor: UInt16, product: UInt16, vendorClass: Bool = false) -> (family: String, model: String, file: String, package: String)? {
    guard let found = ChipsetTable.usbModel(vendor: vendor, product: product, vendorClass: vendorClass) else { return nil }
    return (staticText(found.info.vendor), text(found.model), built("\(found.info.directory)/\(text(found.file))"),
            String(staticText(found.info.usbPackage).prefix(beforeASCII: " ")))  // the name, without "(component …)"
}
