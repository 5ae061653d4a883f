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
    /// An LE event about a link (Connection Update, Data Length Change, PHY
    /// Update) for a handle with no connection: ignored, counted in
    /// `Host.droppedInput` with the ACL of unknown handles.
    case unknownConnection(connection: UInt16, subevent: UInt8)
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
