extension Host {
    /// Event mask: Disconnection Complete (4), Encryption Change (7), Hardware
    /// Error (15), Data Buffer Overflow (25), Encryption Key Refresh (47), LE Meta (61).
    static let eventMask: UInt64 = 1 &<< 4 | 1 &<< 7 | 1 &<< 15 | 1 &<< 25 | 1 &<< 47 | 1 &<< 61
    /// LE event mask: Connection Complete, Advertising Report, Connection Update
    /// Complete, Remote Features, LTK Request, Remote Connection Parameter Request,
    /// Data Length Change (bits 0–6), PHY Update Complete (bit 11).
    static let leEventMask: UInt64 = 0x7F | 1 &<< 11

    mutating func beginInitialization() {
        state = .initializing
        initStep = .reset
        sendInitStep()
    }

    /// Drops every link and queued packet and brings the controller up again.
    mutating func reinitialize(after kind: RecoveryKind) {
        recoveries += 1
        counts.recoveries[kind.rawValue] &+= 1
        for i in 0..<linkSlots where connections[i].inUse {
            let handle = connections[i].handle
            release(i)
            push(.disconnected(connection: handle, reason: nil))
        }
        commandQueue.removeAll()
        aclQueue.removeAll()
        earlyACL.removeAll()
        outstandingOpcode = nil
        commandCredits = 1
        aclCredits = 0
        advertiser.resetForRecovery()
        scanner.resetForRecovery()
        beginInitialization()
    }

    mutating func sendInitStep() {
        var command = Capacity.HCIPacket.command(initStep.opcode)
        switch initStep {
        // The masks as one 8-byte copy each (little-endian), not 8 unrolled appends.
        case .setEventMask:
            withUnsafeBytes(of: Host.eventMask.littleEndian) { _ = command.append($0) }
        case .leSetEventMask:
            withUnsafeBytes(of: Host.leEventMask.littleEndian) { _ = command.append($0) }
        case .leSetRandomAddress:
            controller.address.write(to: &command)
        case .done:
            return
        default:
            break
        }
        queueCommand(command)
    }

    /// Consumes the Command Complete of the current bring-up step.
    mutating func initStepCompleted(_ opcode: UInt16, status: UInt8, _ params: UnsafeRawBufferPointer) {
        guard state == .initializing, opcode == initStep.opcode else { return }
        var reader = ByteReader(params)
        switch initStep {
        case .reset:
            guard status == HCIStatus.success else {
                push(.commandFailed(opcode: opcode, status: status))
                return sendInitStep()  // retry: the deadline re-initialises if it keeps failing
            }
            break  // the controller now has its default event masks and no links
        case .readLocalVersion:
            if status == 0, reader.has(8) {
                controller.hciVersion = reader.u8()
                controller.hciRevision = reader.u16()
                controller.lmpVersion = reader.u8()
                controller.manufacturer = reader.u16()
                controller.lmpSubversion = reader.u16()
            }
        case .readBDAddr:
            if status == 0, reader.has(6) { controller.publicAddress = BDAddress(reader: &reader, type: 0) }
        case .readLocalCommands:
            if status == 0, reader.has(8) { controller.supportedCommandsHead = reader.u64() }
        case .readLocalFeatures:
            if status == 0, reader.has(8) { controller.lmpFeatures = reader.u64() }
        case .leReadBufferSize:
            if status == 0, reader.has(3) {
                let length = reader.u16(), count = reader.u8()
                if length > 0, count > 0 {
                    controller.aclDataLength = length
                    controller.aclPackets = UInt16(count)
                    controller.leBuffers = true
                    initStep = .readBufferSize  // skipped below
                }
            }
        case .readBufferSize:
            // Fallback: LE shares the BR/EDR buffers (Vol 4 Part E §7.8.2).
            if status == 0, reader.has(7) {
                let length = reader.u16()
                _ = reader.u8()
                let count = reader.u16()
                controller.aclDataLength = max(27, length)
                controller.aclPackets = max(1, count)
                controller.leBuffers = false
            }
        case .leReadLocalFeatures:
            if status == 0, reader.has(8) { controller.leFeatures = reader.u64() }
        default:
            if status != 0 { push(.commandFailed(opcode: opcode, status: status)) }
        }
        advanceInit()
    }

    mutating func advanceInit() {
        var next = InitStep(rawValue: initStep.rawValue + 1) ?? .done
        if next == .leSetRandomAddress {
            // All-zero public address (Bumble, some clones) or --address: static random.
            if controller.publicAddress.isZero || configuration.forceRandomAddress {
                controller.address = configuration.staticAddress
            } else {
                controller.address = controller.publicAddress
                next = .done
            }
        }
        initStep = next
        if next == .done {
            controllerReady()
        } else {
            sendInitStep()
        }
    }

    mutating func controllerReady() {
        state = .ready
        controller.aclDataLength = min(controller.aclDataLength, 251)
        aclCredits = Int(controller.aclPackets)
        push(.ready)
        updateAdvertising()
        centralReady()
    }
}
