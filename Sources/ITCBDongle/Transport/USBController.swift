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

func libusbError(_ code: Int32) -> String { String(cString: libusb_strerror(code)) }

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
            var ports = [UInt8](repeating: 0, count: 7)
            let depth = libusb_get_port_numbers(device, &ports, 7)
            devices.append(USBCandidate(
                device: device, vendor: descriptor.idVendor, product: descriptor.idProduct,
                bus: Int(libusb_get_bus_number(device)), ports: depth > 0 ? ports[0..<Int(depth)].map(Int.init) : [],
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
        let board = boardUART(firmwareDirectory, path: uart)
        if controllers == 0 {
            Log.warning("no USB Bluetooth controllers found (\(devices.count) USB devices seen)")
            if board == nil { return Exit.success }
        }
        // One flat list of cells, six a row: no array per row, no row arrays joined.
        var cells: [String] = ["VID:PID", "PATH", "DRIVER", "FAMILY", "FIRMWARE", "PRODUCT"]
        for c in devices where c.isBluetooth {
            let (family, firmware) = firmwareColumns(c, firmwareDirectory)
            addRow(&cells, c.id, built("usb:\(c.path)"), c.kernelDriver ?? "(none)", family, firmware, c.productName.escaped)
        }
        if let board {
            addRow(&cells, "UART", built("serial:\(uart)"), "(probed)", board.family, board.file, "the board's Bluetooth UART")
        }
        printColumns(cells, columns: 6)
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
            // Built as bytes (BuiltText): String appends are inlined at every use.
            var text: BuiltText
            switch spec {
            case .usbID(let v, let p): text = "no USB device \(hex4(v)):\(hex4(p))"
            case .usbPath(let b, let p): text = "no USB device at \(usbPath(bus: b, ports: p))"
            default: text = "no USB Bluetooth dongle found"
            }
            text.append("; seen: ")
            var seen = 0
            for device in devices where !device.ports.isEmpty {
                if seen > 0 { text.append(", ") }
                text.append("\(device.id) at \(device.path)")
                if device.isBluetooth { text.append(" (Bluetooth)") }
                seen += 1
            }
            if seen == 0 { text.append("no USB devices") }
            text.append(" (plug one in, or pick one with --transport usb:VID:PID)")
            throw .notFound(text)
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
/// controller at start).
func firmwareColumns(_ c: USBCandidate, _ directory: String) -> (family: String, firmware: String) {
    guard let (family, _, file, package) = firmwareGuess(vendor: c.vendor, product: c.product, vendorClass: c.vendorClass) else {
        return ("-", "not needed")
    }
    let present = ChipsetSetup.fileExists(built("\(directory)/\(file)"))
    return (family, built("\(file) (\(present ? "present" : "MISSING"), \(package.isEmpty ? "no Debian package ships it" : package))"))
}

/// The board's own Bluetooth UART (Raspberry Pi OS names it /dev/serial1, or
/// the serial:PATH given), when there: probed at start, where its chip names
/// itself. With the board known from the device tree, the file the board's
/// chip needs: the first of Linux's names that is there (symbolic links
/// followed), for each chip the board is sold with.
func boardUART(_ directory: String, path: String = "/dev/serial1") -> (family: String, file: String)? {
    guard access(path, F_OK) == 0 else { return nil }
    let board = DeviceTree.current.boardText
    // The chips' files joined as they come, into one text (no array of them joined after).
    var files: BuiltText = ""
    var family = "-"
    var variant = 0
    while true {
        var query = BoardChipQuery(board: board, variant: variant)
        guard ChipsetTable.boardChip(&query) else { break }
        let chip = query.chip
        family = staticText(chip.info.vendor)
        let candidates = VendorFiles.candidatePaths(chip.request, folder: built("\(directory)/\(chip.info.directory)"))
        var found: String? = nil
        for candidate in candidates where access(candidate, R_OK) == 0 {
            found = candidate
            break
        }
        if variant > 0 { files.append(" or ") }
        files.append("\(text(chip.model)): \(found ?? candidates[0]) (\(found == nil ? "MISSING" : "present"))")
        variant += 1
    }
    let file = variant == 0 ? built("\(directory)/brcm/BCM<chip>.hcd (the chip names it at start)") : files.string
    return (family, file)
}

/// The board's UART row as its six cells, as --list-controllers prints it
/// (the unit tests'; the listing adds the two that vary to its cells itself).
func boardUARTRow(_ directory: String, path: String = "/dev/serial1") -> [String]? {
    guard let board = boardUART(directory, path: path) else { return nil }
    return ["UART", built("serial:\(path)"), "(probed)", board.family, board.file, "the board's Bluetooth UART"]
}

/// Appends one row of six cells (`USBController.list`), here once rather than at each row.
@inline(never)
func addRow(_ cells: inout [String], _ a: String, _ b: String, _ c: String, _ d: String, _ e: String, _ f: String) {
    cells.append(a); cells.append(b); cells.append(c); cells.append(d); cells.append(e); cells.append(f)
}

/// `cells`, `columns` a row, printed as `columnLines` lays them out.
func printColumns(_ cells: [String], columns: Int) { columnLines(cells, columns: columns) { printLine($0) } }

/// Rows of `cells` (`columns` a row) as columns two spaces apart, each as wide
/// as its widest cell (the last one not padded); a cell's width is its count
/// of Unicode scalars.
func columnLines(_ cells: [String], columns: Int, _ line: (String) -> Void) {
    var widths = [Int](repeating: 0, count: columns)
    for (i, cell) in cells.enumerated() { widths[i % columns] = max(widths[i % columns], cell.unicodeScalars.count) }
    var text: BuiltText = ""
    for (i, cell) in cells.enumerated() {
        let column = i % columns
        if column > 0 { text.append("  ") }
        text.append("\(cell)")
        if column < columns - 1 {
            text.spaces(widths[column] - cell.unicodeScalars.count)
        } else {
            line(text.string)
            text = ""
        }
    }
}

/// The chipset family, model and typical firmware file (under the firmware directory) of a USB dongle.
func firmwareGuess(vendor: UInt16, product: UInt16, vendorClass: Bool = false) -> (family: String, model: String, file: String, package: String)? {
    guard let found = ChipsetTable.usbModel(vendor: vendor, product: product, vendorClass: vendorClass) else { return nil }
    return (staticText(found.info.vendor), text(found.model), built("\(found.info.directory)/\(text(found.file))"),
            String(staticText(found.info.usbPackage).prefix(beforeASCII: " ")))  // the name, without "(component …)"
}
