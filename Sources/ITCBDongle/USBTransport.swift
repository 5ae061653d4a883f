import BLEHost
import CLibUSB
import Glibc

/// HCI over USB (Core Vol 4 Part B) through libusb-1.0, fully asynchronous and
/// driven by the run loop's poll(2): libusb's descriptors join the poll set and
/// its next timeout bounds the sleep; no helper thread.
///
/// Commands go out as class control transfers on EP0 (bmRequestType 0x20), events
/// arrive on the interrupt IN endpoint, ACL on the bulk endpoints. Endpoint
/// streams are cut into packets by their HCI headers, so an event spanning
/// several interrupt packets (or two events in one transfer) is handled.
final class USBTransport: Transport {
    static let eventTransfers = 4
    static let aclInTransfers = 4
    static let outTransfers = 4
    static let controlTransfers = 2

    let context: OpaquePointer
    let handle: OpaquePointer
    let candidate: USBCandidate
    let description: String
    let eventEndpoint: UInt8
    let aclInEndpoint: UInt8
    let aclOutEndpoint: UInt8
    /// Opened without --usb-reset: a port reset may still help a hung controller.
    let offersPortReset: Bool
    let aclOutMaxPacket: Int
    /// IN transfers are one max-size packet long, as btusb does: each completes
    /// on its own, so no event waits for a short packet that never comes.
    let eventMaxPacket: Int
    let aclInMaxPacket: Int
    var detachedDriver = false

    var eventStream = H4Deframer(endpointOf: H4PacketType.event)
    var aclStream = H4Deframer(endpointOf: H4PacketType.acl)
    var received: [UInt8] = []
    /// Bytes of `received` already handed to the run loop.
    var delivered = 0

    var allTransfers: [UnsafeMutablePointer<libusb_transfer>] = []
    var freeOut: [UnsafeMutablePointer<libusb_transfer>] = []
    var freeControl: [UnsafeMutablePointer<libusb_transfer>] = []
    var pendingWrites: [[UInt8]] = []
    var inFlight = 0
    /// Transfers whose endpoint stalled; the halt is cleared outside the callback.
    var stalled: [UnsafeMutablePointer<libusb_transfer>] = []
    var failure: TransportError? = nil
    var closing = false

    init(context: OpaquePointer, candidate: USBCandidate, reset: Bool) throws(TransportError) {
        offersPortReset = !reset
        self.context = context
        self.candidate = candidate
        let name = "usb:\(candidate.path) (\(candidate.id))"
        description = name
        var opened: OpaquePointer? = nil
        let status = libusb_open(candidate.device, &opened)
        guard status == 0, let opened else {
            if status == Int32(LIBUSB_ERROR_ACCESS.rawValue) {
                throw .unavailable("permission denied opening \(name): install the udev rule (udev/70-itcb-dongle.rules) and add your user to group 'itcb', or run as root")
            }
            throw .unavailable("cannot open \(name): \(libusbError(status))")
        }
        handle = opened
        // Endpoints come from interface 0's descriptors (Vol 4 Part B §2.1.1).
        var config: UnsafeMutablePointer<libusb_config_descriptor>? = nil
        guard libusb_get_active_config_descriptor(candidate.device, &config) == 0, let config,
              config.pointee.bNumInterfaces > 0, config.pointee.interface[0].num_altsetting > 0 else {
            libusb_close(opened)
            throw .unavailable("\(name) has no usable configuration descriptor")
        }
        let endpoints = USBTransport.endpoints(of: config.pointee.interface[0].altsetting[0])
        libusb_free_config_descriptor(config)
        guard let endpoints else {
            libusb_close(opened)
            throw .unavailable("\(name) interface 0 lacks the interrupt IN, bulk IN and bulk OUT endpoints of a Bluetooth controller")
        }
        eventEndpoint = endpoints.event
        aclInEndpoint = endpoints.aclIn
        aclOutEndpoint = endpoints.aclOut
        aclOutMaxPacket = endpoints.aclOutMaxPacket
        eventMaxPacket = endpoints.eventMaxPacket
        aclInMaxPacket = endpoints.aclInMaxPacket

        // Take the interface from btusb; it is given back in close().
        if libusb_kernel_driver_active(handle, 0) == 1 {
            let detach = libusb_detach_kernel_driver(handle, 0)
            guard detach == 0 else {
                let driver = candidate.kernelDriver ?? "kernel driver"
                libusb_close(opened)
                throw .unavailable("could not detach \(driver) from \(name): \(libusbError(detach)) (run as root, or 'modprobe -r btusb')")
            }
            detachedDriver = true
        }
        let claim = libusb_claim_interface(handle, 0)
        guard claim == 0 else {
            if detachedDriver { libusb_attach_kernel_driver(handle, 0) }
            libusb_close(opened)
            if claim == Int32(LIBUSB_ERROR_BUSY.rawValue) {
                throw .unavailable("\(name) is busy: another process holds it (another itcb-dongle instance?)")
            }
            throw .unavailable("cannot claim interface 0 of \(name): \(libusbError(claim))")
        }
        // Reset only once the interface is ours: reset first, and btusb re-binds and
        // starts its own HCI set-up before we could detach it again.
        if reset {
            let result = libusb_reset_device(handle)
            if result != 0 { Log.warning("USB reset of \(name) failed: \(libusbError(result))") }
        }
        try startTransfers()
        Log.info("opened \(name)\(detachedDriver ? ", detached from its kernel driver" : "")")
    }

    struct Endpoints {
        var event: UInt8, aclIn: UInt8, aclOut: UInt8
        var eventMaxPacket: Int, aclInMaxPacket: Int, aclOutMaxPacket: Int
    }

    /// Interrupt IN = events, bulk IN = ACL in, bulk OUT = ACL out; nothing hard-coded.
    static func endpoints(of interface: libusb_interface_descriptor) -> Endpoints? {
        var event: UInt8?, aclIn: UInt8?, aclOut: UInt8?
        var eventSize = 16, inSize = 64, outSize = 64
        for i in 0..<Int(interface.bNumEndpoints) {
            let endpoint = interface.endpoint[i]
            let size = max(8, Int(endpoint.wMaxPacketSize & 0x7FF))
            switch USBEndpointKind(attributes: endpoint.bmAttributes, address: endpoint.bEndpointAddress) {
            case .interruptIn where event == nil: (event, eventSize) = (endpoint.bEndpointAddress, size)
            case .bulkIn where aclIn == nil: (aclIn, inSize) = (endpoint.bEndpointAddress, size)
            case .bulkOut where aclOut == nil: (aclOut, outSize) = (endpoint.bEndpointAddress, size)
            default: break
            }
        }
        guard let event, let aclIn, let aclOut else { return nil }
        return Endpoints(event: event, aclIn: aclIn, aclOut: aclOut,
                         eventMaxPacket: eventSize, aclInMaxPacket: inSize, aclOutMaxPacket: outSize)
    }

    func allocate(_ size: Int) -> UnsafeMutablePointer<libusb_transfer> {
        let transfer = libusb_alloc_transfer(0)!
        transfer.pointee.buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        transfer.pointee.user_data = Unmanaged.passUnretained(self).toOpaque()
        transfer.pointee.callback = usbTransferCompleted
        transfer.pointee.dev_handle = handle
        allTransfers.append(transfer)
        return transfer
    }

    /// The fixed pool: IN transfers stay submitted; OUT and control ones are reused.
    func startTransfers() throws(TransportError) {
        for _ in 0..<USBTransport.eventTransfers {
            let transfer = allocate(eventMaxPacket)
            transfer.pointee.endpoint = eventEndpoint
            transfer.pointee.type = UInt8(LIBUSB_TRANSFER_TYPE_INTERRUPT.rawValue)
            try submitIn(transfer)
        }
        for _ in 0..<USBTransport.aclInTransfers {
            let transfer = allocate(aclInMaxPacket)
            transfer.pointee.endpoint = aclInEndpoint
            transfer.pointee.type = UInt8(LIBUSB_TRANSFER_TYPE_BULK.rawValue)
            try submitIn(transfer)
        }
        for _ in 0..<USBTransport.outTransfers {
            let transfer = allocate(H4Deframer.capacity)
            transfer.pointee.endpoint = aclOutEndpoint
            transfer.pointee.type = UInt8(LIBUSB_TRANSFER_TYPE_BULK.rawValue)
            freeOut.append(transfer)
        }
        for _ in 0..<USBTransport.controlTransfers {
            let transfer = allocate(8 + 260)
            transfer.pointee.endpoint = 0
            transfer.pointee.type = UInt8(LIBUSB_TRANSFER_TYPE_CONTROL.rawValue)
            freeControl.append(transfer)
        }
    }

    func submit(_ transfer: UnsafeMutablePointer<libusb_transfer>) throws(TransportError) {
        let status = libusb_submit_transfer(transfer)
        guard status == 0 else {
            if status == Int32(LIBUSB_ERROR_NO_DEVICE.rawValue) { throw .unplugged("\(description) was unplugged") }
            throw .lost("\(description): cannot submit a transfer: \(libusbError(status))")
        }
        inFlight += 1
    }

    func submitIn(_ transfer: UnsafeMutablePointer<libusb_transfer>) throws(TransportError) {
        transfer.pointee.length = Int32(transfer.pointee.endpoint == eventEndpoint ? eventMaxPacket : aclInMaxPacket)
        transfer.pointee.timeout = 0
        try submit(transfer)
    }

    /// Called by libusb from inside libusb_handle_events (our thread).
    func completed(_ transfer: UnsafeMutablePointer<libusb_transfer>) {
        inFlight -= 1
        let status = transfer.pointee.status
        let endpoint = transfer.pointee.endpoint
        let isIn = endpoint & 0x80 != 0
        if closing { return }
        switch status {
        case LIBUSB_TRANSFER_COMPLETED:
            if isIn {
                let bytes = UnsafeRawBufferPointer(start: transfer.pointee.buffer, count: Int(transfer.pointee.actual_length))
                var packets: [UInt8] = []
                if endpoint == eventEndpoint {
                    eventStream.push(bytes) { type, packet in packets += [type] + Array(packet) }
                } else {
                    aclStream.push(bytes) { type, packet in packets += [type] + Array(packet) }
                }
                received += packets
            }
        case LIBUSB_TRANSFER_STALL:
            // Clear the halt outside the callback, then resubmit (IN) or report (OUT).
            stalled.append(transfer)
            return
        case LIBUSB_TRANSFER_NO_DEVICE:
            failure = .unplugged("\(description) was unplugged")
            return
        case LIBUSB_TRANSFER_CANCELLED:
            return
        default:
            // ERROR / TIMED_OUT / OVERFLOW: an unplug shows up as NO_DEVICE on resubmit.
            Log.debug("USB transfer on endpoint 0x\(hex(endpoint)) ended with status \(status.rawValue)")
        }
        if isIn {
            do throws(TransportError) { try submitIn(transfer) } catch { failure = error }
        } else if endpoint == 0 {
            freeControl.append(transfer)
            flushPending()
        } else {
            freeOut.append(transfer)
            flushPending()
        }
    }

    var pollDescriptors: [pollfd] {
        guard let list = libusb_get_pollfds(context) else { return [] }
        defer { libusb_free_pollfds(list) }
        var result: [pollfd] = []
        var i = 0
        while let entry = list[i] {
            result.append(pollfd(fd: entry.pointee.fd, events: entry.pointee.events, revents: 0))
            i += 1
        }
        return result
    }

    var timeoutHint: Int32? {
        var tv = timeval()
        guard libusb_get_next_timeout(context, &tv) == 1 else { return nil }
        return Int32(tv.tv_sec * 1000 + tv.tv_usec / 1000)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, ready: UnsafeMutableBufferPointer<pollfd>) throws(TransportError) -> Int {
        // What the last pass could not hand over goes first (a buffer's worth at a time).
        if delivered < received.count { return handOver(into: buffer) }
        var zero = timeval(tv_sec: 0, tv_usec: 0)
        let status = libusb_handle_events_timeout_completed(context, &zero, nil)
        if status == Int32(LIBUSB_ERROR_NO_DEVICE.rawValue) { throw .unplugged("\(description) was unplugged") }
        var cleared: [UInt8] = []
        while let transfer = stalled.popLast() {
            let endpoint = transfer.pointee.endpoint
            if !cleared.contains(endpoint) {
                cleared.append(endpoint)
                let clear = libusb_clear_halt(handle, endpoint)
                Log.warning("USB endpoint 0x\(hex(endpoint)) stalled; halt cleared (\(clear == 0 ? "ok" : libusbError(clear)))")
            }
            if endpoint & 0x80 != 0 {
                try submitIn(transfer)
            } else if endpoint == 0 {
                freeControl.append(transfer)  // the command is lost; the host's command timeout recovers
            } else {
                freeOut.append(transfer)
            }
        }
        flushPending()
        if let failure { throw failure }
        return handOver(into: buffer)
    }

    /// Copies received H4 bytes into the run loop's buffer.
    func handOver(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(buffer.count, received.count - delivered)
        received.withUnsafeBytes { raw in
            buffer.baseAddress!.copyMemory(from: raw.baseAddress! + delivered, byteCount: count)
        }
        delivered += count
        if delivered == received.count {
            received.removeAll(keepingCapacity: true)
            delivered = 0
        }
        return count
    }

    /// An Intel boot loader answers Secure Send with HCI events on bulk IN
    /// (Linux btusb_recv_bulk_intel): while on, bulk IN is cut as events.
    func bulkInCarriesEvents(_ on: Bool) {
        aclStream = H4Deframer(endpointOf: on ? H4PacketType.event : H4PacketType.acl)
    }

    /// Packets are submitted as they are written; nothing waits for a flush.
    func flush() throws(TransportError) {}

    func write(_ packet: UnsafeRawBufferPointer) throws(TransportError) {
        if let failure { throw failure }
        pendingWrites.append(Array(packet))
        flushPending()
        if let failure { throw failure }
    }

    /// Sends queued packets while transfers are free (commands and ACL keep their order per kind).
    func flushPending() {
        while let packet = pendingWrites.first {
            guard packet.count > 1 else {
                pendingWrites.removeFirst()
                continue
            }
            let transfer: UnsafeMutablePointer<libusb_transfer>
            if packet[0] == H4PacketType.command {
                guard let free = freeControl.popLast() else { return }
                transfer = free
                // Setup packet: class request to the device (Vol 4 Part B §2.2.1).
                let length = packet.count - 1
                let buffer = transfer.pointee.buffer!
                buffer[0] = 0x20
                buffer[1] = 0x00
                buffer[2] = 0; buffer[3] = 0  // wValue
                buffer[4] = 0; buffer[5] = 0  // wIndex
                buffer[6] = UInt8(length & 0xFF); buffer[7] = UInt8(length >> 8)
                for i in 0..<length { buffer[8 + i] = packet[1 + i] }
                transfer.pointee.length = Int32(8 + length)
                transfer.pointee.timeout = 1000
                transfer.pointee.flags = 0
            } else if packet[0] == H4PacketType.acl {
                guard let free = freeOut.popLast() else { return }
                transfer = free
                let length = packet.count - 1
                for i in 0..<length { transfer.pointee.buffer[i] = packet[1 + i] }
                transfer.pointee.length = Int32(length)
                transfer.pointee.timeout = 2000
                // A transfer that is a multiple of wMaxPacketSize needs a zero-length packet to end it.
                transfer.pointee.flags = length % aclOutMaxPacket == 0
                    ? UInt8(LIBUSB_TRANSFER_ADD_ZERO_PACKET.rawValue) : 0
            } else {
                pendingWrites.removeFirst()
                continue
            }
            pendingWrites.removeFirst()
            do throws(TransportError) {
                try submit(transfer)
            } catch {
                failure = error
                return
            }
        }
    }

    func close() {
        closing = true
        for transfer in allTransfers { libusb_cancel_transfer(transfer) }
        // Let cancellations complete before freeing (bounded: an unplugged device answers at once).
        var zero = timeval(tv_sec: 0, tv_usec: 100_000)
        var rounds = 0
        while inFlight > 0, rounds < 20 {
            libusb_handle_events_timeout_completed(context, &zero, nil)
            rounds += 1
        }
        libusb_release_interface(handle, 0)
        if detachedDriver {
            let result = libusb_attach_kernel_driver(handle, 0)
            if result == 0 { Log.debug("kernel driver re-attached to \(description)") }
        }
        libusb_close(handle)
        if inFlight == 0 {
            for transfer in allTransfers {
                transfer.pointee.buffer.deallocate()
                transfer.pointee.buffer = nil
                libusb_free_transfer(transfer)
            }
        }
        allTransfers.removeAll()
        libusb_exit(context)
    }
}

/// libusb's completion callback: a C function pointer, so it finds its transport through user_data.
let usbTransferCompleted: libusb_transfer_cb_fn = { transfer in
    guard let transfer, let user = transfer.pointee.user_data else { return }
    Unmanaged<USBTransport>.fromOpaque(user).takeUnretainedValue().completed(transfer)
}

/// Endpoint kinds by descriptor (USB 2.0 §9.6.6): bmAttributes bits 1..0, direction bit 7.
enum USBEndpointKind: Equatable {
    case interruptIn, bulkIn, bulkOut, other

    init(attributes: UInt8, address: UInt8) {
        let isIn = address & 0x80 != 0
        switch (attributes & 0x03, isIn) {
        case (0x03, true): self = .interruptIn
        case (0x02, true): self = .bulkIn
        case (0x02, false): self = .bulkOut
        default: self = .other
        }
    }
}
