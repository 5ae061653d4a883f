/// What the peripheral asks of a new link so that a question and its answer
/// fit in one connection event (docs/PERFORMANCE.md, "On the air"): its
/// preferred connection parameters (`HostConfiguration.preferredParameters`),
/// and, where both controllers support them, the LE Data Length Extension and
/// the 2M PHY.
///
/// The steps: LE Read Remote Features (Core Vol 4 Part E §7.8.21); then the
/// parameters through the link layer's Connection Parameters Request procedure
/// (LE Connection Update, §7.8.18) when both sides support it, otherwise the
/// L2CAP Connection Parameter Update Request (Vol 3 Part A §4.20); LE Set Data
/// Length (§7.8.33) and LE Set PHY (§7.8.49) when both support them. A refusal
/// is final for the link (no retry); a central's own request is still honoured
/// (`remoteConnectionParameterRequest`).
enum LinkTuning: Equatable {
    /// Nothing asked (a link where we are the central, or tuning off).
    case none
    /// LE Read Remote Features sent.
    case askingFeatures
    /// The link layer's procedure asked; the L2CAP request if the peer cannot.
    case askingLinkLayer
    /// The L2CAP request sent (identifier), waiting for its response.
    case askingCentral(identifier: UInt8)
    case done
}

extension Host {
    /// A link where we are the peripheral appeared: start tuning it.
    mutating func beginTuning(_ index: Int) {
        guard !connections[index].isCentral else { return }
        connections[index].tuning = .askingFeatures
        var command = Capacity.HCIPacket.command(HCIOpcode.leReadRemoteFeatures)
        command.appendUInt16(connections[index].handle)
        queueCommand(command)
    }

    /// LE Read Remote Features Complete (or its failure: no features known).
    mutating func remoteFeaturesKnown(_ handle: UInt16, _ features: UInt64) {
        guard let index = connectionIndex(handle), connections[index].tuning == .askingFeatures else { return }
        let both = controller.leFeatures & features
        if let parameters = configuration.preferredParameters {
            if both & LEFeature.connectionParametersRequest != 0 {
                connections[index].tuning = .askingLinkLayer
                queueConnectionParameters(HCIOpcode.leConnectionUpdate, handle, parameters)
            } else {
                askCentral(index, parameters)
            }
        } else {
            connections[index].tuning = .done
        }
        if both & LEFeature.dataPacketLengthExtension != 0 {
            // The longest LL payload and the time it takes on 1M (§7.8.33: 251 octets, 2120 µs).
            var command = Capacity.HCIPacket.command(HCIOpcode.leSetDataLength)
            command.appendUInt16(handle)
            command.appendUInt16(251)
            command.appendUInt16(2120)
            queueCommand(command)
        }
        if both & LEFeature.twoMegabitPHY != 0, !unansweredOptional {
            // All PHYs 0 (both preferences given), TX and RX 2M, no coding preference.
            var command = Capacity.HCIPacket.command(HCIOpcode.leSetPHY)
            command.appendUInt16(handle)
            command.append(0x00)
            command.append(0x02)
            command.append(0x02)
            command.appendUInt16(0x0000)
            queueCommand(command)
        }
    }

    /// The L2CAP Connection Parameter Update Request, on the link's signalling channel.
    mutating func askCentral(_ index: Int, _ parameters: ConnectionParameters) {
        signalingIdentifier = signalingIdentifier == UInt8.max ? 1 : signalingIdentifier + 1
        var request = FixedBytes<16>()
        L2CAPSignaling.updateRequest(parameters, identifier: signalingIdentifier, into: &request)
        connections[index].tuning = .askingCentral(identifier: signalingIdentifier)
        request.withBytes { _ = sendL2CAP(connections[index].handle, channel: L2CAPChannel.leSignaling, $0) }
    }

    /// The link layer's procedure failed: the peer cannot do it after all
    /// (or the controller would not), so the central is asked over L2CAP once.
    mutating func linkLayerUpdateFailed(_ handle: UInt16, status: UInt8) {
        guard let index = connectionIndex(handle), connections[index].tuning == .askingLinkLayer,
              let parameters = configuration.preferredParameters else { return }
        askCentral(index, parameters)
    }

    /// The central answered our L2CAP request; a refusal is final for the link.
    mutating func centralAnswered(_ index: Int, identifier: UInt8, accepted: Bool) {
        guard connections[index].tuning == .askingCentral(identifier: identifier) else { return }
        connections[index].tuning = .done
        if !accepted { push(.connectionParametersRefused(connection: connections[index].handle)) }
    }

    /// LE Set PHY is an optional step some controllers never answer (Bumble's
    /// virtual one: no Command Status at all). Unanswered within this long
    /// (ms; a controller answers a command in milliseconds), it is given up
    /// without resetting a controller that may well be fine, and the commands
    /// behind it go on (a stop's disconnections); a probe then tells, under
    /// the ordinary command timeout.
    static var optionalCommandTimeout: UInt64 { 250 }

    static func isOptional(_ opcode: UInt16) -> Bool { opcode == HCIOpcode.leSetPHY }

    mutating func optionalCommandUnanswered(_ opcode: UInt16) {
        outstandingOpcode = nil
        commandCredits = max(commandCredits, 1)
        unansweredOptional = true
        push(.linkOptionRefused(opcode: opcode, status: nil))
        if state == .ready { queueCommand(Capacity.HCIPacket.command(HCIOpcode.readLocalVersion)) }
    }

    /// A tuning command the controller refused at once (Command Status or
    /// Complete). Harmless: the link keeps what it has (Bumble's controller
    /// answers Unknown HCI Command to LE Set PHY and LE Set Data Length). The
    /// link is the one waiting for that step whose handle's low byte the
    /// command carried (one command is outstanding at a time).
    mutating func tuningCommandFailed(_ opcode: UInt16, status: UInt8, handleLow: UInt8) {
        push(.linkOptionRefused(opcode: opcode, status: status))
        let waiting: LinkTuning
        switch opcode {
        case HCIOpcode.leReadRemoteFeatures: waiting = .askingFeatures
        case HCIOpcode.leConnectionUpdate: waiting = .askingLinkLayer
        default: return
        }
        for i in 0..<linkSlots where connections[i].inUse && connections[i].tuning == waiting
            && UInt8(truncatingIfNeeded: connections[i].handle) == handleLow {
            let handle = connections[i].handle
            return waiting == .askingFeatures ? remoteFeaturesKnown(handle, 0) : linkLayerUpdateFailed(handle, status: status)
        }
    }
}
