/// What the controller told us about itself during bring-up.
public struct ControllerInfo {
    public var hciVersion: UInt8 = 0
    public var hciRevision: UInt16 = 0
    public var lmpVersion: UInt8 = 0
    public var manufacturer: UInt16 = 0
    public var lmpSubversion: UInt16 = 0
    public var publicAddress = BDAddress.zero
    /// The address we advertise/scan/connect with (public, or static random).
    public var address = BDAddress.zero
    /// ACL data length and packet count the host must respect.
    public var aclDataLength: UInt16 = 27
    public var aclPackets: UInt16 = 1
    /// True when LE Read Buffer Size gave the numbers (else the shared BR/EDR buffers).
    public var leBuffers = true
    public var lmpFeatures: UInt64 = 0
    public var leFeatures: UInt64 = 0
    /// Supported Commands bit mask, first 8 octets (Vol 4 Part E §6.27); enough for reports.
    public var supportedCommandsHead: UInt64 = 0

    public init() {}
}

/// Events leaving the host core; the platform logs them and the application reacts.
public enum HostEvent {
    /// The controller finished bring-up (also after a recovery).
    case ready(ControllerInfo)
    /// A command we sent failed (status from Command Complete or Command Status).
    case commandFailed(opcode: UInt16, status: UInt8)
    case advertising(enabled: Bool)
    /// The controller refused to advertise while a connection exists (Command Disallowed).
    case advertisingWhileConnectedUnsupported
    case scanning(enabled: Bool)
    case connected(handle: UInt16, peer: BDAddress, isCentral: Bool, interval: UInt16)
    /// LE Create Connection failed or was cancelled (status), or no slot was free.
    case connectionFailed(status: UInt8)
    /// A connection beyond --max-centrals was refused.
    case connectionRejected(handle: UInt16, peer: BDAddress)
    case disconnected(handle: UInt16, reason: UInt8)
    /// A central had no write accepted (subscription, question) for HostConfiguration.idleTimeout: it is being disconnected.
    case idleDisconnect(handle: UInt16, peer: BDAddress)
    case connectionUpdated(handle: UInt16, interval: UInt16, latency: UInt16, timeout: UInt16)
    case mtuExchanged(handle: UInt16, mtu: UInt16)
    case subscriptionChanged(handle: UInt16, valueHandle: UInt16, value: UInt16)
    /// The peer tried to pair; we answered Pairing Not Supported.
    /// A peer's SMP packet was refused ("Pairing Not Supported"). Rate-limited
    /// per link: the first, then at most one per `Host.repeatLineInterval`, and
    /// one at the disconnection when some were not reported; `unreported` is how
    /// many were refused since the last one (so a hostile peer cannot fill the log).
    case pairingRefused(handle: UInt16, unreported: Int)
    /// A command got no answer within the deadline: the controller is being re-initialised.
    case controllerTimeout(opcode: UInt16)
    /// The controller reported a Hardware Error: it is being re-initialised.
    case hardwareError(code: UInt8)
    case dataBufferOverflow
    /// Input that was dropped (malformed or unexpected); `what` says which layer.
    case dropped(what: DropReason)
    case advertisingReport(AdvertisingReport)
    case gattClient(GATTClientEvent)
    /// Shutdown finished: advertising/scanning off, links closed, controller reset.
    /// The host stopped; `controllerReset`: the controller confirmed the HCI Reset
    /// (false when it was never initialised, or did not answer in time).
    case shutdownComplete(controllerReset: Bool)
}

/// Where dropped input came from (counted and logged, never fatal).
public enum DropReason: Equatable {
    case hciEvent
    case aclUnknownHandle
    case aclMalformed
    case l2capUnknownChannel
    case txQueueFull
    case eventQueueFull
}

/// One advertising report (legacy 0x02 or extended 0x0D), payload copied.
public struct AdvertisingReport {
    public var address: BDAddress
    public var rssi: Int8
    /// Event type bits: connectable / scannable / scan response.
    public var connectable: Bool
    public var isScanResponse: Bool
    public var data: FixedBytes<31>

    public init(address: BDAddress, rssi: Int8, connectable: Bool, isScanResponse: Bool, data: FixedBytes<31>) {
        self.address = address
        self.rssi = rssi
        self.connectable = connectable
        self.isScanResponse = isScanResponse
        self.data = data
    }
}

/// A fixed-capacity FIFO for values of any type (events, commands). Slots hold
/// plain elements (a filler until first use), so a pop copies the element out
/// once and writes nothing back. For large elements `pop(into:)` is the cheap
/// one: an `Optional` result is built in a temporary and copied again, even
/// when the queue is empty.
public struct FixedQueue<let capacity: Int, Element>: ~Copyable {
    var items: InlineArray<capacity, Element>
    var head = 0
    public private(set) var count = 0

    public init(filler: Element) { items = InlineArray(repeating: filler) }

    public var isEmpty: Bool { count == 0 }
    public var isFull: Bool { count == capacity }

    @discardableResult
    public mutating func push(_ item: Element) -> Bool {
        guard count < capacity else { return false }
        items[(head + count) % capacity] = item
        count += 1
        return true
    }

    public mutating func pop() -> Element? {
        guard count > 0 else { return nil }
        let index = head
        dropFirst()
        return items[index]
    }

    /// Moves the oldest element into `slot`; false, with `slot` untouched and
    /// nothing copied, when the queue is empty.
    public mutating func pop(into slot: inout Element) -> Bool {
        guard count > 0 else { return false }
        slot = items[head]
        dropFirst()
        return true
    }

    mutating func dropFirst() {
        head = (head + 1) % capacity
        count -= 1
    }

    public mutating func removeAll() {
        head = 0
        count = 0
    }
}
