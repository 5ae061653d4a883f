import CLibUSB
import CLinux
import BLEHost
import Chipsets

/// The fixed pool of libusb transfers: IN ones always submitted, OUT and control
/// ones reused, each completion queued for the next `receive`.
extension USBTransport {
    /// One transfer of the pool, for `endpoint` with a buffer of `size` bytes.
    func allocate(_ size: Int, endpoint: UInt8, type: libusb_transfer_type) -> UnsafeMutablePointer<libusb_transfer> {
        let transfer = libusb_alloc_transfer(0)!
        transfer.pointee.buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        transfer.pointee.user_data = Unmanaged.passUnretained(self).toOpaque()
        transfer.pointee.callback = usbTransferCompleted
        transfer.pointee.dev_handle = handle
        transfer.pointee.timeout = 0
        transfer.pointee.endpoint = endpoint
        transfer.pointee.type = UInt8(type.rawValue)
        allTransfers.push(transfer)
        return transfer
    }

    /// `count` IN transfers of one packet each on `endpoint`, submitted.
    func submitIn(_ count: Int, endpoint: UInt8, maxPacket: Int, type: libusb_transfer_type) throws(TransportError) {
        for _ in 0..<count {
            let transfer = allocate(maxPacket, endpoint: endpoint, type: type)
            transfer.pointee.length = Int32(maxPacket)
            try submit(transfer)
        }
    }

    /// The fixed pool: IN transfers stay submitted; OUT and control ones are reused.
    /// No transfer carries a timeout: the host's HCI command timeout already
    /// recovers a controller that stops answering, and a timeout would make
    /// libusb re-arm its timerfd on every submission and completion.
    func startTransfers() throws(TransportError) {
        try submitIn(USBTransport.eventTransfers, endpoint: eventEndpoint, maxPacket: eventMaxPacket, type: LIBUSB_TRANSFER_TYPE_INTERRUPT)
        try submitIn(USBTransport.aclInTransfers, endpoint: aclInEndpoint, maxPacket: aclInMaxPacket, type: LIBUSB_TRANSFER_TYPE_BULK)
        for _ in 0..<USBTransport.outTransfers {
            freeOut.push(allocate(USBTransport.outTransferSize, endpoint: aclOutEndpoint, type: LIBUSB_TRANSFER_TYPE_BULK))
        }
        for _ in 0..<USBTransport.controlTransfers {
            // The setup packet, then the command (its indicator's byte is not sent).
            freeControl.push(allocate(8 + USBTransport.outTransferSize, endpoint: 0, type: LIBUSB_TRANSFER_TYPE_CONTROL))
        }
    }

    func submit(_ transfer: UnsafeMutablePointer<libusb_transfer>) throws(TransportError) {
        let status = libusb_submit_transfer(transfer)
        guard status == 0 else { throw submitFailure(status) }
        inFlight += 1
    }

    /// The errors, built outside the per-transfer paths that throw them.
    @inline(never)
    func submitFailure(_ status: Int32) -> TransportError {
        if status == Int32(LIBUSB_ERROR_NO_DEVICE.rawValue) { return unpluggedError }
        return .lost("\(description): cannot submit a transfer: \(libusbError(status))")
    }

    var unpluggedError: TransportError {
        @inline(never) get { .unplugged("\(description) was unplugged") }
    }

    /// Called by libusb from inside libusb_handle_events (our thread): only
    /// notes what happened; packets are handed over after libusb returns.
    func completed(_ transfer: UnsafeMutablePointer<libusb_transfer>) {
        inFlight -= 1
        if closing { return }
        let isIn = transfer.pointee.endpoint & 0x80 != 0
        switch transfer.pointee.status {
        case LIBUSB_TRANSFER_COMPLETED where isIn, LIBUSB_TRANSFER_OVERFLOW where isIn:
            // Babble (OVERFLOW) is dropped in order with the packets around it (deliverCompleted).
            completedIn.push(transfer)
            return
        case LIBUSB_TRANSFER_COMPLETED:
            if transfer.pointee.endpoint == aclOutEndpoint {
                outStallsInARow = 0
            } else if vendorControl, controlEnded(transfer, ok: true) {
                return
            }
        case LIBUSB_TRANSFER_STALL where vendorControl && transfer.pointee.endpoint == 0:
            // A vendor request the chip refused: its answer says so (no halt to clear on EP0).
            if controlEnded(transfer, ok: false) { return }
        case LIBUSB_TRANSFER_STALL:
            // Clear the halt outside the callback, then resubmit (IN) or report (OUT).
            stalls += 1
            stalled.push(transfer)
            return
        case LIBUSB_TRANSFER_NO_DEVICE:
            failure = unpluggedError
            return
        case LIBUSB_TRANSFER_CANCELLED:
            return
        default:
            // ERROR / TIMED_OUT / OUT babble: an unplug shows up as NO_DEVICE on resubmit.
            Log.debug("USB transfer on endpoint 0x\(hex(transfer.pointee.endpoint)) ended with status \(transfer.pointee.status.rawValue)")
            if isIn {
                do throws(TransportError) { try submit(transfer) } catch { failure = error }
                return
            }
        }
        release(transfer)
    }

    /// A control transfer of the set-up's vendor protocol ended: a vendor
    /// command sent as HCI has its answer asked for with the same transfer; a
    /// register request or an answer read is kept for the driver (an empty
    /// answer too: the steps ask again after the chip's gap, on the driver's
    /// clock, `USBVendorControl.answerRead`). False: an ordinary HCI command,
    /// released as before.
    func controlEnded(_ transfer: UnsafeMutablePointer<libusb_transfer>, ok: Bool) -> Bool {
        let buffer = transfer.pointee.buffer!
        let setup = UnsafeRawBufferPointer(start: buffer, count: 8)
        if setup[0] == 0x20 {
            let command = UnsafeRawBufferPointer(start: buffer + 7, count: Int(transfer.pointee.length) - 7)
            guard ok, USBVendorControl.answeredThroughControl(command) else { return false }
            transfer.pointee.length = Int32(USBVendorControl.answerRequest.write(into: buffer)) + 64
        } else {
            completedControl.push(transfer)
            return true
        }
        do throws(TransportError) { try submit(transfer) } catch { failure = error }
        return true
    }

    /// The answers of `completedControl` as events, then their transfers are free.
    func deliverControl(_ deliver: (TransportInput) -> Void) {
        while let transfer = completedControl.popFirst() {
            let buffer = transfer.pointee.buffer!
            let ok = transfer.pointee.status == LIBUSB_TRANSFER_COMPLETED
            if buffer[0] == USBVendorControl.answerRequest.requestType, buffer[1] == USBVendorControl.answerRequest.request {
                // A refused read is an answer cut short: the steps end with that, not a timeout.
                // An empty one is "nothing yet": the steps ask again after the chip's gap.
                let count = !ok ? USBVendorControl.refusedAnswer(into: buffer + 8)
                    : transfer.pointee.actual_length == 0 ? USBVendorControl.nothingYet(into: buffer + 8)
                    : Int(transfer.pointee.actual_length)
                deliver(.packet(type: H4PacketType.event, UnsafeRawBufferPointer(start: buffer + 8, count: count)))
            } else {
                // A register request: its answer is made up where the command was.
                let read = ok && buffer[0] & 0x80 != 0 && transfer.pointee.actual_length >= 4
                let value = read ? UInt32(buffer[8]) | UInt32(buffer[9]) << 8 | UInt32(buffer[10]) << 16 | UInt32(buffer[11]) << 24 : 0
                let count = USBVendorControl.registerAnswer(ok: ok && (read || buffer[0] & 0x80 == 0), value: value, into: buffer + 8)
                deliver(.packet(type: H4PacketType.event, UnsafeRawBufferPointer(start: buffer + 8, count: count)))
            }
            release(transfer)
        }
    }

    /// An OUT or control transfer is free again: the oldest waiting packet takes it.
    func release(_ transfer: UnsafeMutablePointer<libusb_transfer>) {
        if transfer.pointee.endpoint == 0 { freeControl.push(transfer) } else { freeOut.push(transfer) }
        sendWaiting()
    }

    /// Sends waiting packets while transfers are free.
    func sendWaiting() {
        while waitingCount > 0 {
            let slot = waitingHead
            let packet = UnsafeRawBufferPointer(start: waiting.baseAddress! + slot * USBTransport.waitingSlot, count: waitingLengths[slot])
            guard submitOut(packet, onBulk: waitingBulk[slot]) else { return }
            waitingHead = (waitingHead + 1) % USBTransport.waitingCapacity
            waitingCount -= 1
        }
    }

    /// Copies one H4 packet into a free transfer of its kind and submits it;
    /// false when none is free.
    func submitOut(_ packet: UnsafeRawBufferPointer, onBulk: Bool) -> Bool {
        let length = packet.count - 1
        let body = packet.baseAddress! + 1
        let transfer: UnsafeMutablePointer<libusb_transfer>
        switch packet[0] {
        case H4PacketType.command where !onBulk:
            guard let free = freeControl.pop() else { return false }
            transfer = free
            let buffer = transfer.pointee.buffer!
            if vendorControl, let request = USBVendorControl.registerRequest(packet) {
                transfer.pointee.length = Int32(request.write(into: buffer)) + (request.isIn ? 4 : 0)
                transfer.pointee.flags = 0
                break
            }
            if vendorControl, USBVendorControl.isAnswerRead(packet) {
                // The steps' re-ask after an empty answer, once the chip's gap passed.
                transfer.pointee.length = Int32(USBVendorControl.answerRequest.write(into: buffer)) + 64
                transfer.pointee.flags = 0
                break
            }
            // Setup packet: class request to the device (Vol 4 Part B §2.2.1).
            buffer[0] = 0x20
            buffer[1] = 0x00
            buffer[2] = 0; buffer[3] = 0  // wValue
            buffer[4] = 0; buffer[5] = 0  // wIndex
            buffer[6] = UInt8(length & 0xFF); buffer[7] = UInt8(length >> 8)
            UnsafeMutableRawPointer(buffer + 8).copyMemory(from: body, byteCount: length)
            transfer.pointee.length = Int32(8 + length)
            transfer.pointee.flags = 0
        case H4PacketType.acl, H4PacketType.command:
            guard let free = freeOut.pop() else { return false }
            transfer = free
            UnsafeMutableRawPointer(transfer.pointee.buffer!).copyMemory(from: body, byteCount: length)
            transfer.pointee.length = Int32(length)
            // A transfer that is a multiple of wMaxPacketSize needs a zero-length packet to end it.
            transfer.pointee.flags = length % aclOutMaxPacket == 0 ? UInt8(LIBUSB_TRANSFER_ADD_ZERO_PACKET.rawValue) : 0
        default:
            return true  // not a packet USB carries: dropped
        }
        do throws(TransportError) {
            try submit(transfer)
        } catch {
            failure = error
        }
        return true
    }
}

/// libusb's completion callback: a C function pointer, so it finds its transport through user_data.
let usbTransferCompleted: libusb_transfer_cb_fn = { transfer in
    guard let transfer, let user = transfer.pointee.user_data else { return }
    // The transport outlives its transfers (close() reaps them all): no retain needed.
    Unmanaged<USBTransport>.fromOpaque(user)._withUnsafeGuaranteedRef { $0.completed(transfer) }
}
