import BLEHost
import CLibUSB
import CLinux
import Chipsets

/// HCI over USB (Core Vol 4 Part B) through libusb-1.0, fully asynchronous and
/// driven by the run loop's poll(2): libusb's descriptors join the poll set
/// (kept current through libusb's pollfd notifiers) and libusb's events are
/// handled only when one of them is ready; no helper thread.
///
/// Commands go out as class control transfers on EP0 (bmRequestType 0x20),
/// events arrive on the interrupt IN endpoint, ACL on the bulk endpoints. The
/// transfers are a fixed pool made at open: IN ones stay submitted and each
/// completed one hands its packet to the driver from its own buffer
/// (`EndpointReassembler`: gathered only when a packet spans several USB
/// packets); a sent packet is copied into a free OUT transfer, or waits in a
/// fixed ring when none is free. Nothing per packet allocates here; libusb's
/// Linux backend callocs one URB array per submitted transfer.
final class USBTransport: Transport, PortRecovery, SetupLink {
    static let eventTransfers = Capacity.usbEventTransfers
    static let aclInTransfers = Capacity.usbACLInTransfers
    static let outTransfers = Capacity.usbOutTransfers
    static let controlTransfers = Capacity.usbControlTransfers
    /// Packets waiting for a free OUT transfer.
    static var waitingCapacity: Int { Capacity.USBWaitingSlots<Int>.count }
    static let inCapacity = eventTransfers + aclInTransfers

    let context: OpaquePointer
    let handle: OpaquePointer
    let candidate: USBCandidate
    let description: String
    let eventEndpoint: UInt8
    let aclInEndpoint: UInt8
    let aclOutEndpoint: UInt8
    /// Opened without --usb-reset: a port reset may still help a hung controller.
    let offersPortReset: Bool
    var canResetPort: Bool { true }
    var portRecovery: PortRecovery? { self }
    var setupLink: SetupLink? { self }
    let aclOutMaxPacket: Int
    /// IN transfers are one max-size packet long, as btusb does: each completes
    /// on its own, so no event waits for a short packet that never comes.
    let eventMaxPacket: Int
    let aclInMaxPacket: Int
    var detachedDriver = false
    /// The kernel driver this process took from the dongle and has not given
    /// back: a session closed to reopen (`closeToReopen`) keeps it away, and
    /// the last close gives it back.
    nonisolated(unsafe) static var kernelDriverOwed = false
    var givesBackDriver = true

    var events: EndpointReassembler
    var aclIn: EndpointReassembler
    /// An Intel boot loader's Secure Send goes on bulk OUT (`SetupWishes`).
    var commandsOnBulk = false
    /// That boot loader answers with HCI events on bulk IN
    /// (Linux btusb_recv_bulk_intel): while set, bulk IN is cut as events.
    var bulkInCarriesEvents = false {
        didSet {
            guard bulkInCarriesEvents != oldValue else { return }
            aclIn = EndpointReassembler(type: bulkInCarriesEvents ? H4PacketType.event : H4PacketType.acl, packetSize: aclInMaxPacket)
        }
    }

    func chipsetFacts(into context: inout ChipsetContext) {
        context.overUSB = true
        context.usbVendor = candidate.vendor
        context.usbProduct = candidate.product
        context.usbVendorClass = candidate.vendorClass
    }

    func useVendorControl(_ on: Bool) { vendorControl = on }

    func follow(_ wishes: SetupWishes) {
        commandsOnBulk = wishes.commandsOnBulk
        bulkInCarriesEvents = wishes.eventsOnBulk
    }

    /// Said once before the port reset and retry (bring-up and vendor set-up alike).
    func warnHungAfterWarmStart() {
        Log.warning("controller at \(description) did not answer HCI Reset (a dongle that hangs after a warm start?); resetting its USB port and trying once more")
    }

    func beginPortReset() -> String { "resetting its USB port" }
    var portResetName: String { "a USB port reset" }

    /// The chipset set-up's quirk (`USBVendorControl`): its register commands
    /// become vendor control requests and its vendor commands' answers are read
    /// through control IN, on the steps' behalf.
    var vendorControl = false
    /// Control transfers of `vendorControl` done, whose answers the driver gets next.
    var completedControl = TransferList(capacity: controlTransfers)

    /// Every transfer made at open (freed at close).
    var allTransfers = TransferList(capacity: inCapacity + outTransfers + controlTransfers)
    var freeOut = TransferList(capacity: outTransfers)
    var freeControl = TransferList(capacity: controlTransfers)
    /// IN transfers completed in this round of libusb events, in completion order.
    var completedIn = TransferList(capacity: inCapacity)
    /// Transfers whose endpoint stalled; the halt is cleared outside the callback.
    var stalled = TransferList(capacity: inCapacity + outTransfers + controlTransfers)
    /// Packets sent while no OUT transfer was free (H4, indicator first), oldest first.
    let waiting = UnsafeMutableRawBufferPointer.allocate(byteCount: waitingCapacity * waitingSlot, alignment: 8)
    var waitingLengths = Capacity.USBWaitingSlots<Int>(repeating: 0)
    var waitingBulk = Capacity.USBWaitingSlots<Bool>(repeating: false)
    var waitingHead = 0
    var waitingCount = 0
    /// One outgoing packet, indicator first: what the host sends at most.
    static var waitingSlot: Int { Capacity.HCIPacket.capacityCount }
    /// An OUT transfer holds one outgoing packet without its indicator.
    static var outTransferSize: Int { waitingSlot - 1 }
    var inFlight = 0
    /// Bulk OUT halts cleared since a bulk OUT transfer last went through: a
    /// dongle that refuses every packet gets each one sent again this many
    /// times, then its packets are dropped (no endless clear-and-resend loop).
    var outStallsInARow = 0
    static let outStallResends = 3
    /// Stalled transfers since open (--metrics-file).
    var stalls = 0
    var failure: TransportError? = nil
    var closing = false
    var pollDescriptorsChanged = false
    var holdsEventLock = false

    init(context: OpaquePointer, candidate: USBCandidate, reset: Bool) throws(TransportError) {
        offersPortReset = !reset
        self.context = context
        self.candidate = candidate
        let name = built("usb:\(candidate.path) (\(candidate.id))")
        description = name
        var opened: OpaquePointer? = nil
        let status = libusb_open(candidate.device, &opened)
        guard status == 0, let opened else {
            if status == Int32(LIBUSB_ERROR_ACCESS.rawValue) {
                throw .unavailable(usbOpenText("permission denied opening ", name, ": install the udev rule (udev/70-itcb-dongle.rules) and add your user to group 'itcb', or run as root"))
            }
            throw .unavailable(usbOpenFailure("cannot open ", name, ": ", status))
        }
        handle = opened
        // Endpoints come from interface 0's descriptors (Vol 4 Part B §2.1.1):
        // the raw bytes Linux read at enumeration (sysfs `descriptors`: the
        // device descriptor, then configuration 0's, USB 2.0 §9.6), walked by
        // the core's sans-IO parser (fuzzed, tested on real devices' bytes).
        // Not a GET_DESCRIPTOR of our own: just after a plug-in btusb is still
        // sending its set-up commands on the same control endpoint, and a
        // request of ours in between them is bus traffic the kernel already did.
        let descriptorsPath = candidate.sysfs("/descriptors")
        guard let cached = readFileBytes(descriptorsPath.pointer, limit: 4096) else {
            libusb_close(opened)
            throw .unavailable(usbOpenText("", name, " has no usable configuration descriptor: Linux's copy of it (sysfs) cannot be read"))
        }
        defer { cached.deallocate() }
        let endpoints: USBEndpoints
        do throws(USBDescriptorError) {
            endpoints = try USBConfigurationDescriptor.endpoints(deviceDescriptors: UnsafeRawBufferPointer(cached))
        } catch {
            libusb_close(opened)
            var text = BuiltText.Builder()
            text.appendInterpolation(name)
            text.appendLiteral(" has no usable configuration descriptor: ")
            describing(error, into: &text)
            throw .unavailable(BuiltText(text))
        }
        eventEndpoint = endpoints.event
        aclInEndpoint = endpoints.aclIn
        aclOutEndpoint = endpoints.aclOut
        aclOutMaxPacket = endpoints.aclOutMaxPacket
        eventMaxPacket = endpoints.eventMaxPacket
        aclInMaxPacket = endpoints.aclInMaxPacket
        events = EndpointReassembler(type: H4PacketType.event, packetSize: endpoints.eventMaxPacket)
        aclIn = EndpointReassembler(type: H4PacketType.acl, packetSize: endpoints.aclInMaxPacket)

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
        if USBTransport.kernelDriverOwed {
            detachedDriver = true
            USBTransport.kernelDriverOwed = false
        }
        let claim = libusb_claim_interface(handle, 0)
        guard claim == 0 else {
            if detachedDriver { libusb_attach_kernel_driver(handle, 0) }
            libusb_close(opened)
            if claim == Int32(LIBUSB_ERROR_BUSY.rawValue) {
                throw .unavailable(usbOpenText("", name, " is busy: another process holds it (another itcb-dongle instance?)"))
            }
            throw .unavailable(usbOpenFailure("cannot claim interface 0 of ", name, ": ", claim))
        }
        // Reset only once the interface is ours: reset first, and btusb re-binds and
        // starts its own HCI set-up before we could detach it again.
        if reset {
            let result = libusb_reset_device(handle)
            if result == Int32(LIBUSB_ERROR_NOT_FOUND.rawValue) || result == Int32(LIBUSB_ERROR_NO_DEVICE.rawValue) {
                // It left the bus and enumerates again as a new device: this handle is dead.
                libusb_release_interface(handle, 0)
                libusb_close(opened)
                throw .notFound(usbOpenText("", name, " left the bus at its port reset (it enumerates again)"))
            }
            if result != 0 { Log.warning(usbOpenFailure("USB reset of ", name, " failed: ", result)) }
        }
        wakeDescriptor = libusbEventDescriptor(context)
        if wakeDescriptor >= 0 { Signals.wakeFD = wakeDescriptor }
        libusb_set_pollfd_notifiers(context, usbPollfdAdded, usbPollfdRemoved, Unmanaged.passUnretained(self).toOpaque())
        // One thread handles libusb's events for the whole run: take its event
        // lock once (libusb_handle_events_locked) instead of on every wake-up.
        // Nothing of ours waits for a synchronous transfer from here on (they
        // would need the lock); close() gives it back first.
        try startTransfers()
        libusb_lock_events(context)
        holdsEventLock = true
        Log.info(usbOpenText("opened ", name, detachedDriver ? ", detached from its kernel driver" : ""))
    }

    /// libusb's descriptors (it adds and removes its own: `pollDescriptorsChanged`).
    var pollDescriptors: [pollfd] {
        pollDescriptorsChanged = false
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

    var counts: TransportCounts {
        TransportCounts(droppedPackets: events.droppedPackets + aclIn.droppedPackets, stalls: stalls,
                        babbledTransfers: events.babbledTransfers + aclIn.babbledTransfers)
    }

    /// libusb's eventfd, which the transport sleeps on (through libusb's own
    /// poll) when it has nothing else to watch: signals wake it by writing it.
    /// Found once at open; -1 (and the transport polls its descriptors itself) if it cannot be told apart.
    let wakeDescriptor: Int32
    /// libusb's descriptors and the run loop's two, when the transport polls itself.
    var pollSet = PollSet()
    /// A libusb descriptor was ready at the last poll: its events are handled in `receive`.
    var eventsReady = false

    /// Sleeps in libusb's own poll when only the signal pipe is to be watched
    /// besides (one poll per wake-up instead of two), else in poll(2) over
    /// libusb's descriptors and the run loop's. libusb keeps no timer to wake
    /// up for: no transfer of ours carries a timeout.
    func wait(until deadline: UInt64, now: UInt64, signals: Int32, extra: Int32) throws(TransportError) -> UInt64 {
        guard wakeDescriptor >= 0, extra < 0 else {
            if pollSet.isEmpty || pollDescriptorsChanged { pollSet.set(pollDescriptors) }
            let woke = try pollSet.wait(until: deadline, now: now, signals: signals, extra: extra)
            eventsReady = woke.ready
            return woke.now
        }
        // Whether the driver waits for room to send (then a freed OUT transfer matters).
        let sendBlocked = !canSend
        var now = now
        while true {
            try handleEvents(milliseconds: sleepMilliseconds(until: deadline, now: now))
            now = monotonicMilliseconds()
            // A wake-up that only completed OUT transfers leaves the driver
            // as it was (no input, no deadline due): sleep again at once.
            if completedIn.count > 0 || completedControl.count > 0 || failure != nil
                || Signals.arrived || now >= deadline || sendBlocked { return now }
        }
    }

    func receive(_ deliver: (TransportInput) -> Void) throws(TransportError) {
        if eventsReady {
            eventsReady = false
            try handleEvents(milliseconds: 0)
        }
        try deliverCompleted(deliver)
    }

    /// One round of libusb's event handling: its poll (sleeping up to
    /// `milliseconds`, -1 for long), then each completion noted by `completed`.
    func handleEvents(milliseconds: Int32) throws(TransportError) {
        let wait = milliseconds < 0 ? 60_000 : Int(milliseconds)
        var timeout = timeval(tv_sec: wait / 1000, tv_usec: (wait % 1000) * 1000)
        let status = libusb_handle_events_locked(context, &timeout)
        if status == Int32(LIBUSB_ERROR_NO_DEVICE.rawValue) { throw unpluggedError }
        try clearStalls()
    }

    /// Each completed IN transfer's packets, from its own buffer, then it goes
    /// back to the endpoint, then the completed control transfers' answers.
    func deliverCompleted(_ deliver: (TransportInput) -> Void) throws(TransportError) {
        while let transfer = completedIn.popFirst() {
            let bytes = UnsafeRawBufferPointer(start: transfer.pointee.buffer, count: Int(transfer.pointee.actual_length))
            if transfer.pointee.status == LIBUSB_TRANSFER_OVERFLOW {
                babbled(transfer.pointee.endpoint)
            } else if transfer.pointee.endpoint == eventEndpoint {
                events.feed(bytes) { type, packet in deliver(.packet(type: type, packet)) }
            } else {
                aclIn.feed(bytes) { type, packet in deliver(.packet(type: type, packet)) }
            }
            do throws(TransportError) { try submit(transfer) } catch { failure = error }
        }
        // A MediaTek download's answers come only through control IN.
        if completedControl.count > 0 { deliverControl(deliver) }
        if let failure { throw failure }
    }

    /// Packets are submitted as they are sent; nothing waits for a flush.
    func flush() throws(TransportError) {
        if let failure { throw failure }
    }

    var canSend: Bool { waitingCount < USBTransport.waitingCapacity }

    func send(_ packet: UnsafeRawBufferPointer) throws(TransportError) {
        if let failure { throw failure }
        guard packet.count > 1, packet.count <= USBTransport.waitingSlot else { return }
        if waitingCount == 0, submitOut(packet, onBulk: commandsOnBulk) { return }
        // No transfer free (or older packets wait): keep it, in order.
        guard waitingCount < USBTransport.waitingCapacity else { return }
        let slot = (waitingHead + waitingCount) % USBTransport.waitingCapacity
        (waiting.baseAddress! + slot * USBTransport.waitingSlot).copyMemory(from: packet.baseAddress!, byteCount: packet.count)
        waitingLengths[slot] = packet.count
        waitingBulk[slot] = commandsOnBulk
        waitingCount += 1
        if let failure { throw failure }
    }

    func closeToReopen() {
        givesBackDriver = false
        close()
    }

    func close() {
        closing = true
        if Signals.wakeFD == wakeDescriptor { Signals.wakeFD = -1 }
        if holdsEventLock {
            libusb_unlock_events(context)
            holdsEventLock = false
        }
        libusb_set_pollfd_notifiers(context, nil, nil, nil)
        for i in 0..<allTransfers.count { libusb_cancel_transfer(allTransfers[i]) }
        // Let cancellations complete before freeing (bounded: an unplugged device answers at once).
        var wait = timeval(tv_sec: 0, tv_usec: 100_000)
        var rounds = 0
        while inFlight > 0, rounds < 20 {
            libusb_handle_events_timeout_completed(context, &wait, nil)
            rounds += 1
        }
        libusb_release_interface(handle, 0)
        if detachedDriver, !givesBackDriver {
            USBTransport.kernelDriverOwed = true
        } else if detachedDriver {
            let result = libusb_attach_kernel_driver(handle, 0)
            if result == 0 { Log.debug("kernel driver re-attached to \(description)") }
        }
        libusb_close(handle)
        if inFlight == 0 {
            for i in 0..<allTransfers.count {
                let transfer = allTransfers[i]
                transfer.pointee.buffer.deallocate()
                transfer.pointee.buffer = nil
                libusb_free_transfer(transfer)
            }
        }
        allTransfers.removeAll()
        // Each list's slots (no array of the lists: it would be allocated to be walked).
        allTransfers.slots.deallocate()
        freeOut.slots.deallocate()
        freeControl.slots.deallocate()
        completedIn.slots.deallocate()
        stalled.slots.deallocate()
        completedControl.slots.deallocate()
        waiting.deallocate()
        pollSet.free()
        pollSet = PollSet()
        libusb_exit(context)
    }
}

/// libusb's internal event descriptor: the first of its poll descriptors
/// (libusb 1.0.26 io.c: "fds[0] is always the internal signalling event"),
/// checked to be an eventfd through /proc; -1 when it is not.
@inline(never)
func libusbEventDescriptor(_ context: OpaquePointer) -> Int32 {
    guard let list = libusb_get_pollfds(context) else { return -1 }
    defer { libusb_free_pollfds(list) }
    guard let first = list[0] else { return -1 }
    let fd = first.pointee.fd
    let eventfd: StaticString = "anon_inode:[eventfd]"
    return withUnsafeTemporaryAllocation(byteCount: 64, alignment: 1) { target in
        let length = readlink(cPath(built("/proc/self/fd/\(fd)")), target.baseAddress!.assumingMemoryBound(to: CChar.self), 63)
        // The link's text is exactly eventfd's name (compared as bytes).
        guard length == eventfd.utf8CodeUnitCount else { return -1 }
        for i in 0 ..< length where target[i] != eventfd.utf8Start[i] { return -1 }
        return fd
    }
}

/// "BEFOREusb:1-1 (0a12:0001)AFTER": the open's lines, built here once
/// rather than by a builder at each step of init.
@inline(never)
func usbOpenText(_ before: StaticString, _ name: String, _ after: StaticString) -> BuiltText {
    "\(before)\(name)\(after)"
}

/// "BEFOREusb:1-1 (0a12:0001)AFTER<libusb's words>END": the open's failures.
@inline(never)
func usbOpenFailure(_ before: StaticString, _ name: String, _ after: StaticString, _ code: Int32, _ end: StaticString = "") -> BuiltText {
    var text = usbOpenText(before, name, after)
    // libusb's words straight in, as libusbError gives them: no String for them.
    text.bytes.appendTerminated(UnsafeRawPointer(libusb_strerror(code)).assumingMemoryBound(to: UInt8.self))
    text.bytes.appendTerminated(end.utf8Start)
    return text
}

/// libusb's pollfd notifiers: the poll set is rebuilt before the next wait.
let usbPollfdAdded: libusb_pollfd_added_cb = { _, _, user in
    guard let user else { return }
    Unmanaged<USBTransport>.fromOpaque(user).takeUnretainedValue().pollDescriptorsChanged = true
}
let usbPollfdRemoved: libusb_pollfd_removed_cb = { _, user in
    guard let user else { return }
    Unmanaged<USBTransport>.fromOpaque(user).takeUnretainedValue().pollDescriptorsChanged = true
}
