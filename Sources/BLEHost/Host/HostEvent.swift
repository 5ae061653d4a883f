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

/// Events leaving the host core; the platform logs them and the application
/// reacts. Small (pinned at 32 bytes or less by a test): values travel beside
/// the event, not in it. The controller's details are `Host.controller`, an
/// advertising report is `Host.advertisingReport` while its event is handled,
/// and notifications reach the application through its `GATTClientDelegate`.
public enum HostEvent {
    /// The controller finished bring-up (also after a recovery); `Host.controller` says what it is.
    case ready
    /// A command we sent failed (status from Command Complete or Command Status).
    case commandFailed(opcode: UInt16, status: UInt8)
    case advertising(enabled: Bool)
    /// The controller refused to advertise while a connection exists (Command Disallowed).
    case advertisingWhileConnectedUnsupported
    case scanning(enabled: Bool)
    case connected(connection: UInt16, peer: BDAddress, isCentral: Bool, interval: UInt16)
    /// LE Create Connection failed or was cancelled (status), or no slot was free.
    case connectionFailed(status: UInt8)
    /// A connection beyond --max-centrals was refused.
    case connectionRejected(connection: UInt16, peer: BDAddress)
    /// A link closed: `reason` as the controller reported it, nil when the
    /// host dropped the link itself because the controller is being reset.
    case disconnected(connection: UInt16, reason: UInt8?)
    /// A central had no write accepted (subscription, question) for HostConfiguration.idleTimeout: it is being disconnected.
    case idleDisconnect(connection: UInt16, peer: BDAddress)
    case connectionUpdated(connection: UInt16, interval: UInt16, latency: UInt16, timeout: UInt16)
    /// The central refused the connection parameters we asked for (kept for this link).
    case connectionParametersRefused(connection: UInt16)
    /// LE Data Length Change: the longest LL payloads now, each way.
    case dataLengthChanged(connection: UInt16, txOctets: UInt16, rxOctets: UInt16)
    /// LE PHY Update Complete: 1 = 1M, 2 = 2M, 3 = Coded.
    case phyUpdated(connection: UInt16, tx: UInt8, rx: UInt8)
    /// The controller refused an optional step of a link's tuning (LinkTuning.swift).
    /// `status` nil: it did not answer (given up after `Host.optionalCommandTimeout`).
    case linkOptionRefused(opcode: UInt16, status: UInt8?)
    /// A peer's client set the ATT MTU of our server (Exchange MTU Request).
    case mtuExchanged(connection: UInt16, mtu: UInt16)
    case subscriptionChanged(connection: UInt16, attribute: UInt16, value: UInt16)
    /// A peer's SMP packet was refused ("Pairing Not Supported"). Rate-limited
    /// per link: the first, then at most one per `Host.repeatLineInterval`, and
    /// one at the disconnection when some were not reported; `unreported` is how
    /// many were refused since the last one (so a hostile peer cannot fill the log).
    case pairingRefused(connection: UInt16, unreported: Int)
    /// A command got no answer within the deadline; `resetting`: the
    /// controller is being reset and brought up again
    /// (`HostConfiguration.recoversController`).
    case controllerTimeout(opcode: UInt16, resetting: Bool)
    /// The controller reported a Hardware Error (its code; nil when the event
    /// was too short to carry one); `resetting`: it is reset and brought up
    /// again (false only during a stop).
    case hardwareError(code: UInt8?, resetting: Bool)
    case dataBufferOverflow
    /// Input from the controller or a peer that was dropped (counted in `Host.droppedInput`).
    case droppedInput(InputDrop)
    /// Something the host had to send or report that did not fit (counted in
    /// `Host.droppedOutput`). Rate-limited like `pairingRefused`, for the
    /// host as a whole; `unreported`: drops since the last line.
    case droppedOutput(OutputDrop, unreported: Int)
    /// Requests of a peer dropped unanswered because it did not wait for the
    /// answers it was owed (flow control, see `Host`). Rate-limited per link
    /// like `pairingRefused`.
    case requestsDropped(connection: UInt16, reason: RequestDrop, unreported: Int)
    /// An advertiser was heard: the report is `Host.advertisingReport` until the next event is taken.
    case advertisingReport
    /// A GATT client procedure finished (results in `Host.client`).
    case gattClient(GATTClientEvent)
    /// Shutdown finished: advertising/scanning off, links closed, controller reset.
    /// The host stopped; `controllerReset`: the controller confirmed the HCI Reset
    /// (false when it was never initialised, or did not answer in time).
    case shutdownComplete(controllerReset: Bool)
}

/// Why input was dropped (counted and logged, never fatal).
public enum InputDrop: Equatable {
    /// An HCI event shorter than its parameters say, or than its code needs.
    case hciEvent
    /// ACL for a connection handle we do not have (and not one just being made).
    case aclUnknownHandle
    /// An ACL packet or L2CAP PDU whose lengths disagree, or a reserved boundary flag.
    case aclMalformed
    /// An L2CAP fixed channel we do not serve.
    case l2capUnknownChannel
    /// An ATT PDU from the peer's server too short for its opcode.
    case attMalformed
}

/// Why a peer's request was dropped unanswered.
public enum RequestDrop: Equatable {
    /// An ATT request while the answer to the previous one still waited for
    /// room (one request at a time, Core Vol 3 Part F §3.3.2).
    case attPipelined
    /// An L2CAP signalling request while the answer to the previous one still waited.
    case signalingPipelined
}

/// Why output was dropped: the fixed queue it goes through was full.
public enum OutputDrop: Equatable {
    /// An HCI command did not fit the command ring.
    case commandQueueFull
    /// An L2CAP PDU (ATT response, notification, signaling, SMP) did not fit the transmit slots.
    case transmitQueueFull
    /// A host event (or advertising report) did not fit the event ring: the application never sees it.
    /// Reported once per overflow, in the ring's last slot, kept for this notice.
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

    /// An empty report (the filler of the report ring).
    public init() {
        self.init(address: .zero, rssi: 127, connectable: false, isScanResponse: false, data: FixedBytes())
    }

    public init(address: BDAddress, rssi: Int8, connectable: Bool, isScanResponse: Bool, data: FixedBytes<31>) {
        self.address = address
        self.rssi = rssi
        self.connectable = connectable
        self.isScanResponse = isScanResponse
        self.data = data
    }
}
