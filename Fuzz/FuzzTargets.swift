// libFuzzer targets for every input path of the core (scripts/fuzz.sh builds and
// runs them). The first input byte picks the target (modulo `targetCount`; the
// environment's FUZZ_TARGET=n forces target n, for scripts/fuzz.sh's
// single-target mode); the rest is the input. A crash, a trap (out-of-bounds,
// overflow), a failed precondition or an ASan report is a finding.
//   0 H4 stream   1 L2CAP over ACL   2 ATT server   3 vendor firmware
//   4 advertising data   5 USB IN transfers through EndpointReassembler into a HostLoop
//   6 a Realtek firmware or config file   7 an Intel .sfi (TLV and legacy) or .ddc file
//   8 a USB configuration descriptor, walked for a controller's endpoints
//   9 a driver serving up to 8 links while the transmit queue fills and drains at random
//   10 a Broadcom patchram (.hcd) file, checked and downloaded
//   11 a MediaTek RAM code (_hdr.bin) file, checked and downloaded
// Targets 6, 7, 10 and 11 take whole files (scripts/fuzz.sh seeds them from the real
// Debian files and runs each on its own with a larger -max_len).
@testable import BLEHost  // the transmit queue's fill (scripts/fuzz.sh builds BLEHost with -enable-testing)
import EightBall
import Chipsets
import Glibc

let targetCount = 12

/// FUZZ_TARGET, read once.
let forcedTarget: Int? = {
    guard let value = getenv("FUZZ_TARGET"), let n = Int(String(cString: value)), n >= 0 else { return nil }
    return n % targetCount
}()

/// The host and the 8-Ball it serves (non-copyable, so built afresh per input).
struct Rig: ~Copyable {
    var host: Host
    var logic: EightBallPeripheral
}

/// A host brought up against a scripted controller, with one central connected
/// (handle 0x0040); `buffers` LE ACL buffers of 27 bytes.
func connectedPeripheral(name: UnsafeRawBufferPointer = bytes("Fuzz8"), links: Int = 4, buffers: UInt8 = 8) -> Rig {
    var database = GATTDatabase()
    var logic = EightBallPeripheral(name: name, style: .slug, seed: 1, database: &database)
    var configuration = HostConfiguration(role: .peripheral)
    configuration.maxConnections = links
    var host = Host(configuration: configuration, database: database)
    host.start(now: 0)
    var packet = Capacity.HCIPacket()
    var now: UInt64 = 0
    // Answer each bring-up and GAP command with a successful Command Complete.
    for _ in 0..<40 {
        while host.nextOutgoing(into: &packet) {
            guard packet[0] == H4PacketType.command else { continue }
            var event: [UInt8] = [0x0E, 4, 1, packet[1], packet[2], 0]
            if packet[1] == 0x02, packet[2] == 0x20 { event = [0x0E, 7, 1, 0x02, 0x20, 0, 27, 0, buffers] }  // LE buffers
            event[1] = UInt8(event.count - 2)
            now += 1
            event.withUnsafeBytes { host.handlePacket(type: H4PacketType.event, $0, now: now, delegate: &logic) }
        }
        while let event = host.nextEvent() { logic.handle(event, host: &host) }
    }
    // LE Connection Complete: handle 0x0040 from a random address.
    let complete: [UInt8] = [0x3E, 19, 0x01, 0x00, 0x40, 0x00, 0x01, 0x01, 1, 2, 3, 4, 5, 0xC6, 0x18, 0, 0, 0, 0x90, 0x01, 0]
    complete.withUnsafeBytes { host.handlePacket(type: H4PacketType.event, $0, now: now, delegate: &logic) }
    while let event = host.nextEvent() { logic.handle(event, host: &host) }
    return Rig(host: host, logic: logic)
}

func bytes(_ s: StaticString) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let input = UnsafeRawBufferPointer(start: data + 1, count: size - 1)
    switch forcedTarget ?? Int(data[0]) % targetCount {
    case 6: return fuzzRealtek(input, selector: data[0])
    case 7: return fuzzIntel(input, selector: data[0])
    case 8: return fuzzUSBDescriptor(input)
    case 9: return fuzzTransmitPressure(input)
    case 10: return fuzzBroadcom(input)
    case 11: return fuzzMediaTek(input)
    default: break
    }
    let rig = connectedPeripheral()
    var host = rig.host
    var logic = rig.logic
    var packet = Capacity.HCIPacket()
    switch forcedTarget ?? Int(data[0]) % targetCount {
    case 0:
        // A raw H4 stream from the controller, cut as the run loop cuts it
        // (in place, and across two reads), for the live link.
        var deframer = H4Deframer()
        let split = input.isEmpty ? 0 : Int(input[0]) % (input.count + 1)
        for part in [UnsafeRawBufferPointer(rebasing: input[..<split]), UnsafeRawBufferPointer(rebasing: input[split...])] {
            var offset = 0
            while true {
                let frame = deframer.next(part, offset: &offset)
                if case .none = frame { break }
                var copy = Capacity.ReceivedPacketStore()
                switch frame {
                case .inPlace(_, let start, let count): copy.append(UnsafeRawBufferPointer(rebasing: part[start..<(start + count)]))
                case .buffered: _ = deframer.withPacket { copy.append($0) }
                case .none: break
                }
                let type: UInt8 = switch frame { case .inPlace(let t, _, _), .buffered(let t): t; case .none: 0 }
                copy.withBytes { host.handlePacket(type: type, $0, now: 100, delegate: &logic) }
            }
        }
    case 1:
        // L2CAP B-frames in ACL packets of the connected link, split at arbitrary points.
        var offset = 0
        var first = true
        while offset < input.count {
            let length = min(Int(input[offset]) % 40 + 1, input.count - offset)
            var acl: [UInt8] = [0x40, first ? 0x20 : 0x10, UInt8(length), 0]
            acl += input[offset..<(offset + length)]
            acl.withUnsafeBytes { host.handlePacket(type: H4PacketType.acl, $0, now: 100, delegate: &logic) }
            first = false
            offset += length
        }
    case 2:
        // One ATT PDU straight into the server, with MTU 23, 247 (the firmware's)
        // and ours (517 on Linux).
        var bearer = ATTBearer()
        var server = ATTServer(database: EightBallDatabase.makeDatabase(name: bytes("Fuzz8")))
        var response = Capacity.ATTPDU()
        for mtu: UInt16 in [23, 247, ATT.maxMTU] {
            bearer.mtu = mtu
            _ = server.receive(input, connection: 0x40, bearer: &bearer, delegate: &logic, response: &response)
            precondition(response.count <= Int(mtu), "response longer than the MTU")
        }
    case 3:
        // Vendor firmware: an Intel Read Version, an .sfi/.ddc and events for the
        // loader; Realtek patch files. Every input is a result or an error.
        let cut = input.isEmpty ? 0 : Int(input[0]) % (input.count + 1)
        let head = UnsafeRawBufferPointer(rebasing: input[..<cut]), rest = UnsafeRawBufferPointer(rebasing: input[cut...])
        _ = IntelVersion.parse(head)
        var tlv = IntelVersion()
        tlv.secureBootEngine = cut & 1 == 0 ? 0 : 1
        var legacy = IntelVersion()
        legacy.generation = .legacy
        _ = try? IntelFirmwareLayout.check(rest, version: tlv)
        _ = try? IntelFirmwareLayout.check(rest, version: legacy)
        _ = try? IntelFirmwareLayout.checkDDC(rest)
        var loader = IntelLoader()
        _ = loader.start(into: &packet)
        var at = 0
        while at + 2 <= head.count {
            let length = min(Int(head[at + 1]) + 2, head.count - at)
            _ = loader.handle(event: UnsafeRawBufferPointer(rebasing: head[at..<(at + length)]), into: &packet)
            if loader.phase == .awaitingFiles { _ = loader.provide(firmware: rest, ddc: rest, into: &packet) }
            at += length
        }
        _ = try? RealtekPatchFile.parseV1(rest, romVersion: cut & 0xFF == 0 ? 0 : 1, expectedROM: nil)
        _ = try? RealtekPatchFile.parseV2(rest, romVersion: 1)
    case 5:
        // USB IN endpoints: the input is a sequence of transfers cut into packets
        // by an endpoint's reassembler (events and ACL, 16- and 64-byte USB
        // packets) and handed, as the USB board does, to a driver running a
        // connected 8-Ball. Each transfer is one byte b and what it says:
        //   b >= 0x80      a full USB packet of the next input bytes
        //   0x40...0x7F    a full USB packet of filler (b's low bits), so inputs
        //                  shorter than -max_len reach packets of 1028 bytes and more
        //   0x3F           a long transfer of the rest of the input (a board with larger buffers)
        //   0x3E           a transfer that babbled (LIBUSB_TRANSFER_OVERFLOW): dropped unread
        //   below          a short packet of the next b % (size + 1) bytes
        // Whatever the transfers, a packet handed over is whole by its header
        // and never longer than 1028 bytes, so the driver drops none of them.
        let usb = connectedPeripheral()
        // The host is up already: the driver runs it as it is (not started again).
        var driver = HostLoop(host: usb.host, app: usb.logic, setup: NoSetup())
        var observer = WholePacketObserver()
        var now: UInt64 = 100
        for config in 0..<4 {
            let type = config & 1 == 0 ? H4PacketType.event : H4PacketType.acl
            let size = config < 2 ? 16 : 64
            var reassembler = EndpointReassembler(type: type, packetSize: size)
            var at = 0
            while at < input.count {
                let b = Int(input[at])
                at += 1
                if b == 0x3E {
                    reassembler.babbled()
                    precondition(!reassembler.isMidPacket, "a packet begun survived babble")
                    continue
                }
                var bytes: [UInt8]
                if b & 0xC0 == 0x40 {
                    bytes = [UInt8](repeating: UInt8(b & 0x3F) &* 7, count: size)
                } else {
                    let wanted = b >= 0x80 ? size : b == 0x3F ? input.count - at : b % (size + 1)
                    let length = min(wanted, input.count - at)
                    bytes = Array(input[at..<(at + length)])
                    at += length
                }
                now += 1
                bytes.withUnsafeBytes { transfer in
                    reassembler.feed(transfer) { delivered, packet in
                        precondition(delivered == type, "a packet of another type")
                        checkWhole(delivered, packet)
                        if let base = packet.baseAddress, let start = transfer.baseAddress,
                           base >= start, base < start + transfer.count {
                            precondition(base + packet.count <= start + transfer.count, "a packet in place runs past its transfer")
                        }
                        driver.receive(type: delivered, packet, now: now, observer: &observer)
                    }
                }
                driver.service(now: now, observer: &observer)
                while driver.nextOutgoing() { precondition(driver.outgoing.count > 0) }
            }
            precondition(driver.droppedPackets == 0, "the driver dropped a packet the reassembler called whole")
            reassembler.reset()
            precondition(!reassembler.isMidPacket)
        }
    default:
        // Advertising data and scan responses.
        var summary = AdvertisementSummary()
        summary.merge(input)
        summary.merge(input)
    }
    // Whatever happened, the host must still produce well-formed output and stay bounded.
    var produced = 0
    while host.nextOutgoing(into: &packet) { produced += 1 }
    while host.nextEvent() != nil {}
    logic.poll(host: &host)
    precondition(produced <= 64, "unbounded output")
    return 0
}

/// A packet handed over by an endpoint is whole by its header (Core Vol 4 Part E §5.4).
func checkWhole(_ type: UInt8, _ packet: UnsafeRawBufferPointer) {
    precondition(packet.count <= EndpointReassembler.capacity, "a packet longer than 1028 bytes")
    switch type {
    case H4PacketType.event:
        precondition(packet.count >= 2 && packet.count == 2 + Int(packet[1]), "an event whose length is not its header's")
    case H4PacketType.acl:
        precondition(packet.count >= 4 && packet.count == 4 + (Int(packet[2]) | Int(packet[3]) << 8),
                     "an ACL packet whose length is not its header's")
    default:
        preconditionFailure("a packet of type \(type)")
    }
}

/// Sees every packet the driver takes: each must be whole.
struct WholePacketObserver: HostLoopObserver {
    var packets = 0
    mutating func observe(_ event: HostEvent, host: borrowing Host) {}
    mutating func received(type: UInt8, _ packet: UnsafeRawBufferPointer) {
        checkWhole(type, packet)
        packets += 1
    }
}

/// A Realtek patch (v1 or v2) or config file as read from disk: every parser
/// gives a payload inside the file or an error. Every byte of a payload is read
/// (ASan sees any range outside the file), as the download would.
func fuzzRealtek(_ file: UnsafeRawBufferPointer, selector: UInt8) -> CInt {
    let config = UnsafeRawBufferPointer(rebasing: file[(file.count / 2)...])
    _ = try? RealtekPatchFile.format(file)
    _ = try? RealtekPatchFile.projectID(file)
    let configLength = try? RealtekPatchFile.checkConfig(file)
    if let configLength { precondition(configLength <= file.count, "config length past the file") }
    let halfConfig = try? RealtekPatchFile.checkConfig(config)
    for rom: UInt8 in [0, 1, selector >> 4, 0xFF] {
        var payloads: [RealtekPayload] = []
        if let p = try? RealtekPatchFile.parseV1(file, romVersion: rom, expectedROM: nil) { payloads.append(p) }
        if let p = try? RealtekPatchFile.parseV1(file, romVersion: rom, expectedROM: UInt16(rom) + 1) { payloads.append(p) }
        if let p = try? RealtekPatchFile.parseV2(file, romVersion: rom) { payloads.append(p) }
        if let p = try? RealtekPatchFile.parseV2(file, romVersion: rom, keyID: selector & 0x0F) { payloads.append(p) }
        for var payload in payloads {
            for i in 0..<payload.segmentCount {
                let (start, length) = payload.segment(i)
                precondition(start >= 0 && length >= 0 && start + length <= file.count, "a segment outside the file")
            }
            payload.configLength = halfConfig ?? 0
            // The bytes at every range's ends, the trailer and the config: what a
            // download reads, without reading all of a 100 KB file each time.
            var sum: UInt8 = 0
            var at = 0
            for i in 0..<payload.segmentCount {
                let length = payload.segment(i).length
                if length > 0 {
                    sum &+= payload.byte(at: at, file: file, config: config)
                    sum &+= payload.byte(at: at + length - 1, file: file, config: config)
                }
                at += length
            }
            for i in at..<payload.totalLength where i < at + 4 || i == payload.totalLength - 1 {
                sum &+= payload.byte(at: i, file: file, config: config)
            }
            _ = sum
        }
    }
    return 0
}

/// An Intel firmware file as read from disk: the .sfi checked as a TLV
/// (AX210/AX211, either secure boot engine) and a legacy generation file, and as
/// a .ddc; every section the check accepts lies inside the file.
func fuzzIntel(_ file: UnsafeRawBufferPointer, selector: UInt8) -> CInt {
    var versions: [IntelVersion] = []
    for engine: UInt8 in [0, 1] {
        var tlv = IntelVersion()
        tlv.secureBootEngine = engine
        versions.append(tlv)
    }
    var legacy = IntelVersion()
    legacy.generation = .legacy
    versions.append(legacy)
    for version in versions {
        guard let layout = try? IntelFirmwareLayout.check(file, version: version) else { continue }
        precondition(layout.payloadOffset >= 0 && layout.payloadOffset <= file.count, "payload outside the file")
        for i in 0..<layout.sections.count {
            let section = layout.sections[i]
            precondition(section.offset >= 0 && section.length >= 0 && section.offset + section.length <= file.count,
                         "a section outside the file")
        }
    }
    if let records = try? IntelFirmwareLayout.checkDDC(file) { precondition(records <= file.count, "more DDC records than bytes") }
    // The loader's whole path over the file (after a Read Version the selector shapes).
    var loader = IntelLoader()
    var packet = Capacity.HCIPacket()
    _ = loader.start(into: &packet)
    _ = loader.provide(firmware: file, ddc: file, into: &packet)
    _ = selector
    return 0
}

/// A Broadcom .hcd file as read from disk: the check gives a record count or
/// an error, and a file it accepts downloads record by record (every one read
/// from inside the file, ASan watching) to Launch RAM and the restart.
func fuzzBroadcom(_ file: UnsafeRawBufferPointer) -> CInt {
    let records = try? BroadcomPatchram.check(file)
    var loader = BroadcomLoader()
    var packet = Capacity.HCIPacket()
    var version: [UInt8] = [0x0E, 12, 1, 0x01, 0x10, 0, 6, 0, 0x10, 6, 15, 0, 0x09, 0x22]
    let rlv = version.withUnsafeBytes { LocalVersion(commandComplete: $0) }!
    _ = loader.begin(chip: "BCM43430A1", version: rlv, targetBaud: 0)
    var step = loader.provide(firmware: file, into: &packet)
    precondition((records == nil) == (step != .send), "a file the check refuses was sent, or one it accepts was not")
    guard records != nil else { return 0 }
    var sent = 0
    while loader.phase == .minidriver || loader.phase == .minidriverPause || loader.phase == .records {
        if step == .wait { step = loader.resume(into: &packet); continue }
        precondition(step == .send, "the download stopped before Launch RAM")
        sent += 1
        precondition(Int(packet[3]) + 4 == packet.count, "a command whose length byte is not its length")
        version = [0x0E, 4, 1, packet[1], packet[2], 0]
        step = version.withUnsafeBytes { loader.handle(event: $0, into: &packet) }
    }
    precondition(loader.phase == .restart && sent == records! + 1, "not every record was sent once")
    return 0
}

/// A MediaTek RAM code as read from disk: the check gives a section count or an
/// error, and a file it accepts downloads section by section (every chunk read
/// from inside the file, ASan watching; the chip wants every section) to the
/// activation pause and Bluetooth on.
func fuzzMediaTek(_ file: UnsafeRawBufferPointer) -> CInt {
    let sections = try? MediaTekRAMCode.check(file)
    var loader = MediaTekLoader()
    var packet = Capacity.HCIPacket()
    var step = loader.start(into: &packet)
    // The register reads: legacy id 0, chip id 0x7961, version 1, flavour 0.
    for value: UInt8 in [0x00, 0x61, 0x01, 0x00] {
        precondition(step == .send && packet[5] == MediaTekWMT.register, "a register read expected")
        let answer: [UInt8] = [0xE4, 10, 2, 8, 6, 0, 0, 0, value, value == 0x61 ? 0x79 : 0, 0, 0]
        step = answer.withUnsafeBytes { loader.handle(event: $0, into: &packet) }
    }
    precondition(step == .needFiles, "no file asked for after the register reads")
    step = loader.provide(firmware: file, into: &packet)
    precondition((sections == nil) == (step == .failed), "a file the check refuses was sent, or one it accepts was not")
    guard let sections else { return 0 }
    var expected = 0
    for index in 0..<sections {
        let at = MediaTekRAMCode.map(index) + 16
        let load = Int(file[at]) | Int(file[at + 1]) << 8 | Int(file[at + 2]) << 16 | Int(file[at + 3]) << 24
        expected += (load + MediaTekLoader.chunk - 1) / MediaTekLoader.chunk
    }
    while loader.phase != .done {
        if step == .wait {
            precondition(loader.pause > 0, "waiting with no pause and no answer to come")
            step = loader.resume(into: &packet)
            continue
        }
        precondition(step == .send && Int(packet[3]) + 4 == packet.count, "a command whose length byte is not its length")
        let answer: [UInt8] = [0xE4, 10, 2, packet[5], 6, 0, 0, 0, 0, 0, 0, 0]
        step = answer.withUnsafeBytes { loader.handle(event: $0, into: &packet) }
    }
    precondition(loader.commandsSent == expected, "not every chunk was sent once")
    return 0
}

/// Linux's copy of a device's descriptors as the USB open reads it (the device
/// descriptor, then configurations; a configuration alone is walked as it is):
/// endpoints found are of the right type and direction with a packet size a
/// transfer can use, or a reason.
func fuzzUSBDescriptor(_ raw: UnsafeRawBufferPointer) -> CInt {
    guard let e = try? USBConfigurationDescriptor.endpoints(deviceDescriptors: raw) else { return 0 }
    precondition(e.event & 0x80 != 0 && e.aclIn & 0x80 != 0 && e.aclOut & 0x80 == 0, "an endpoint of the wrong direction")
    for size in [e.eventMaxPacket, e.aclInMaxPacket, e.aclOutMaxPacket] {
        precondition(size >= 8 && size <= 0x7FF, "a packet size no transfer can use")
    }
    precondition(raw.count >= 9 + 9 + 3 * 7, "endpoints from fewer bytes than three descriptors take")
    return 0
}

/// Target 9: the board's loop over a HostLoop running the 8-Ball
/// with a 248-byte name (long reads) for up to 8 centrals, while a controller
/// grants ACL credits (Number Of Completed Packets) or withholds them at random,
/// so the transmit queue fills and drains. The input is a script; each byte
/// picks a step (low nibble) and a link (high nibble), later bytes its details:
///   0 a central connects   1 it disconnects   2 an ATT request (Device Name
///   read or blob, a question, the Answer CCCD on, Exchange MTU, or raw input
///   bytes)   3 an SMP Pairing Request   4 an LE credit-based connection request
///   5 the controller completes some of the link's packets   6 it completes all
///   7 time passes (up to 25.5 s)   8-15 nothing: credits withheld, the queue fills.
/// After every step, one pass (`service`) and the output read as the board does.
/// Checked: a pass returns within a second (one that never returns, the
/// livelock, is libFuzzer's -timeout; scripts/fuzz.sh seeds it); the queue never holds more than its
/// capacity; ACL goes out only for connected links, in 27-byte fragments, never
/// more packets in flight than the controller's buffers; and at the end, with
/// every credit given back, the queue drains and each central that kept to one
/// request of each kind at a time (ATT, signalling, SMP) had every answer.
func fuzzTransmitPressure(_ input: UnsafeRawBufferPointer) -> CInt {
    var script = Script(input)
    let buffers = UInt8(script.next() % 8 + 1)
    let rig = connectedPeripheral(name: longName, links: Capacity.links, buffers: buffers)
    var driver = HostLoop(host: rig.host, app: rig.logic, setup: NoSetup())
    var observer = LinkObserver()
    var model = ControllerModel(buffers: Int(buffers))
    model.connected[0] = true  // connectedPeripheral's central, handle 0x0040
    let question = driver.app.handles.questionHandle, answer = driver.app.handles.answerHandle
    var now: UInt64 = 100
    func l2cap(_ link: Int, channel: UInt16, _ payload: [UInt8]) -> [UInt8] {
        let handle = ControllerModel.handle(link)
        return [UInt8(handle & 0xFF), UInt8(handle >> 8) | 0x20, UInt8((payload.count + 4) & 0xFF), UInt8((payload.count + 4) >> 8),
                UInt8(payload.count & 0xFF), UInt8(payload.count >> 8), UInt8(channel & 0xFF), UInt8(channel >> 8)] + payload
    }
    while !script.isEmpty {
        let step = script.next()
        let link = (step >> 4) % Capacity.links
        let handle = ControllerModel.handle(link)
        var inbound: [(UInt8, [UInt8])] = []
        switch step & 0x0F {
        case 0 where !model.connected[link]:
            inbound.append((H4PacketType.event, [0x3E, 19, 0x01, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), 1, 0x01,
                                                  UInt8(link), 2, 3, 4, 5, 0xC6, 0x18, 0, 0, 0, 0x90, 0x01, 0]))
            model.connected[link] = true
        case 1 where model.connected[link]:
            inbound.append((H4PacketType.event, model.disconnected(link)))
        case 2:
            let kind = script.next() % 6
            let request: [UInt8] = switch kind {
            case 0: [ATTOpcode.readRequest, 3, 0]  // the Device Name (GAP's first characteristic)
            case 1: [ATTOpcode.readBlobRequest, 3, 0, UInt8(script.next()), 0]
            case 2: [ATTOpcode.writeRequest, UInt8(question & 0xFF), UInt8(question >> 8)] + script.bytes(script.next() % 20) + [0x3F]
            case 3: [ATTOpcode.writeRequest, UInt8((answer + 1) & 0xFF), UInt8((answer + 1) >> 8), 1, 0]
            case 4: [ATTOpcode.exchangeMTURequest, UInt8(script.next()), UInt8(script.next() % 3)]
            default: script.bytes(script.next() % 24)
            }
            inbound.append((H4PacketType.acl, l2cap(link, channel: L2CAPChannel.att, request)))
            model.asked(link, .att, legal: kind < 5)  // raw bytes may be a command or no request at all
        case 3:
            inbound.append((H4PacketType.acl, l2cap(link, channel: L2CAPChannel.smp, [0x01, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07])))
            model.asked(link, .smp)
        case 4:
            model.asked(link, .signalling)
            let identifier = UInt8(script.next() | 1)
            inbound.append((H4PacketType.acl, l2cap(link, channel: L2CAPChannel.leSignaling,
                                                    [0x14, identifier, 10, 0, 0x81, 0, 0x40, 0, 23, 0, 23, 0, 1, 0])))
        case 5:
            let n = min(script.next() % 4, model.inFlight[link])
            if n > 0 { inbound.append((H4PacketType.event, model.completed(link, n))) }
        case 6:
            for l in 0..<Capacity.links where model.inFlight[l] > 0 { inbound.append((H4PacketType.event, model.completed(l, model.inFlight[l]))) }
        case 7:
            now += UInt64(script.next()) * 100
        default:
            break  // credits withheld
        }
        now += 1
        for (type, packet) in inbound {
            packet.withUnsafeBytes { driver.receive(type: type, $0, now: now, observer: &observer) }
        }
        pass(&driver, &model, now: now, &observer)
    }
    // Every credit given back, the controller answering: whatever was queued goes out.
    for _ in 0..<400 {
        var inbound: [[UInt8]] = []
        for l in 0..<Capacity.links where model.inFlight[l] > 0 { inbound.append(model.completed(l, model.inFlight[l])) }
        now += 1
        for packet in inbound { packet.withUnsafeBytes { driver.receive(type: H4PacketType.event, $0, now: now, observer: &observer) } }
        pass(&driver, &model, now: now, &observer)
        if inbound.isEmpty && driver.host.aclQueue.count == 0 { break }
    }
    precondition(!driver.host.isReady || driver.host.aclQueue.count == 0,
                 "the transmit queue did not drain with every credit given back (\(driver.host.aclQueue.count) PDUs left)")
    // A central that kept to one request of each kind at a time is owed every answer.
    for link in 0..<Capacity.links where model.connected[link] {
        for exchange in Exchange.allCases where model.owed(link, exchange) {
            preconditionFailure("handle \(ControllerModel.handle(link)): a legal \(exchange) request was never answered")
        }
    }
    return 0
}

/// One turn of the board's loop: a pass, then the output sent to the controller
/// (checked), and the controller's answers to commands.
func pass(_ driver: inout HostLoop<EightBallPeripheral, NoSetup>, _ model: inout ControllerModel, now: UInt64,
          _ observer: inout LinkObserver) {
    for _ in 0..<8 {
        let start = monotonicMilliseconds()
        driver.service(now: now, observer: &observer)
        precondition(monotonicMilliseconds() - start < 1_000, "a pass of the driver did not return within a second")
        model.forget(&observer.gone)
        precondition(driver.host.aclQueue.count <= ACLTransmitQueue.capacity, "the transmit queue holds more than its capacity")
        var answers: [[UInt8]] = []
        var sent = 0
        while driver.nextOutgoing() {
            sent += 1
            precondition(sent <= 1_000, "unbounded output from one pass")
            let packet = driver.outgoing.withBytes { Array($0) }
            if packet[0] == H4PacketType.command {
                answers += model.answer(packet)
                continue
            }
            precondition(packet[0] == H4PacketType.acl && packet.count >= 5, "a packet of type \(packet[0])")
            let handle = (UInt16(packet[1]) | UInt16(packet[2]) << 8) & 0x0FFF
            let link = Int(handle) - 0x40
            precondition(link >= 0 && link < Capacity.links && model.connected[link], "ACL for handle \(handle), not connected (links \(model.connected))")
            precondition(packet.count - 5 <= 27, "an ACL fragment longer than the controller's buffers")
            model.inFlight[link] += 1
            precondition(model.inFlight.reduce(0, +) <= model.buffers, "more ACL packets in flight than the controller has buffers")
            model.sent(link, packet)
        }
        for packet in answers {
            // The link is gone once its Disconnection Complete reaches the host (not when Disconnect was sent).
            if packet[0] == HCIEventCode.disconnectionComplete { model.forget(Int(packet[3]) | Int(packet[4]) << 8) }
            packet.withUnsafeBytes { driver.receive(type: H4PacketType.event, $0, now: now, observer: &observer) }
        }
        model.forget(&observer.gone)
        // Work left for at once (a bounded pass that stopped, room freed): the board would pass again now.
        guard answers.count > 0 || driver.nextDeadline() == 0 else { return }
    }
}

/// The request-answer exchanges a central may have one of in flight each (the
/// host's flow control owes it one answer of each: docs/ARCHITECTURE.md, "Flow control").
enum Exchange: Int, CaseIterable { case att, signalling, smp }

/// The controller as the fuzz target plays it, and the centrals behind it:
/// links, ACL packets not yet completed, requests not yet answered.
struct ControllerModel {
    let buffers: Int
    var connected = [Bool](repeating: false, count: Capacity.links)
    var inFlight = [Int](repeating: 0, count: Capacity.links)
    /// Per link and exchange: a request not yet answered; a second one sent before the answer (not owed then).
    var waiting = [[Bool]](repeating: [false, false, false], count: Capacity.links)
    var pipelined = [[Bool]](repeating: [false, false, false], count: Capacity.links)
    /// The L2CAP PDU the host's fragments are building, per link.
    var incoming = [[UInt8]](repeating: [], count: Capacity.links)

    mutating func asked(_ link: Int, _ exchange: Exchange, legal: Bool = true) {
        guard connected[link] else { return }
        if !legal || waiting[link][exchange.rawValue] { pipelined[link][exchange.rawValue] = true }
        waiting[link][exchange.rawValue] = true
    }

    func owed(_ link: Int, _ exchange: Exchange) -> Bool {
        waiting[link][exchange.rawValue] && !pipelined[link][exchange.rawValue]
    }

    /// An ACL fragment the host sent: a whole L2CAP PDU that is an answer clears its exchange.
    mutating func sent(_ link: Int, _ packet: [UInt8]) {
        let first = (packet[2] >> 4) & 0x3 == 0
        incoming[link] = (first ? [] : incoming[link]) + packet[5...]
        let pdu = incoming[link]
        guard pdu.count >= 5, pdu.count == 4 + (Int(pdu[0]) | Int(pdu[1]) << 8) else { return }
        incoming[link] = []
        let exchange: Exchange? = switch UInt16(pdu[2]) | UInt16(pdu[3]) << 8 {
        // Responses are the odd opcodes up to Execute Write Response (0x1B on is a notification, an indication).
        case L2CAPChannel.att where pdu[4] & 1 == 1 && pdu[4] <= 0x19: .att
        case L2CAPChannel.leSignaling where pdu[4] == 0x15 || pdu[4] == 0x01: .signalling  // the response, or Command Reject
        case L2CAPChannel.smp: .smp
        default: nil
        }
        if let exchange { waiting[link][exchange.rawValue] = false }
    }

    static func handle(_ link: Int) -> UInt16 { UInt16(0x40 + link) }

    /// Number Of Completed Packets for `n` of the link's packets.
    mutating func completed(_ link: Int, _ n: Int) -> [UInt8] {
        inFlight[link] -= n
        let handle = Self.handle(link)
        return [HCIEventCode.numberOfCompletedPackets, 5, 1, UInt8(handle & 0xFF), UInt8(handle >> 8), UInt8(n), 0]
    }

    /// Disconnection Complete (remote user terminated); the link's packets are gone with it.
    mutating func disconnected(_ link: Int) -> [UInt8] {
        forget(Int(Self.handle(link)))
        return Self.disconnectionComplete(Self.handle(link))
    }

    static func disconnectionComplete(_ handle: UInt16) -> [UInt8] {
        [HCIEventCode.disconnectionComplete, 4, 0, UInt8(handle & 0xFF), UInt8(handle >> 8), 0x13]
    }

    mutating func forget(_ handle: Int) {
        let link = handle - 0x40
        guard link >= 0, link < Capacity.links else { return }
        connected[link] = false
        inFlight[link] = 0
        waiting[link] = [false, false, false]
        pipelined[link] = [false, false, false]
        incoming[link] = []
    }

    /// The links the host said are gone (its own view: a reset drops them all).
    mutating func forget(_ handles: inout [UInt16]) {
        for handle in handles { forget(Int(handle)) }
        handles.removeAll()
    }

    /// The events answering a command: Command Status for Disconnect (then the
    /// Disconnection Complete), Command Complete with success for the rest.
    func answer(_ command: [UInt8]) -> [[UInt8]] {
        let opcode = UInt16(command[1]) | UInt16(command[2]) << 8
        guard opcode == HCIOpcode.disconnect, command.count >= 6 else {
            return [[0x0E, 4, 1, command[1], command[2], 0]]
        }
        let status: [UInt8] = [0x0F, 4, 0, 1, command[1], command[2]]
        let link = Int((UInt16(command[4]) | UInt16(command[5]) << 8) & 0x0FFF) - 0x40
        guard link >= 0, link < Capacity.links, connected[link] else { return [status] }
        return [status, Self.disconnectionComplete(Self.handle(link))]
    }
}

/// Whole packets (as `WholePacketObserver`), and the links the host dropped.
struct LinkObserver: HostLoopObserver {
    var gone: [UInt16] = []
    mutating func observe(_ event: HostEvent, host: borrowing Host) {
        if case .disconnected(let handle, _) = event { gone.append(handle) }
    }
    mutating func received(type: UInt8, _ packet: UnsafeRawBufferPointer) { checkWhole(type, packet) }
}

/// Input bytes read in order; zeros once they run out.
struct Script {
    let data: UnsafeRawBufferPointer
    var at = 0
    init(_ data: UnsafeRawBufferPointer) { self.data = data }
    var isEmpty: Bool { at >= data.count }
    mutating func next() -> Int {
        guard at < data.count else { return 0 }
        at += 1
        return Int(data[at - 1])
    }
    mutating func bytes(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8(next()) } }
}

/// The 8-Ball's longest name (248 bytes): a Device Name read is a Read and 11 Read Blobs at ATT_MTU 23.
let longName: UnsafeRawBufferPointer = {
    let name = UnsafeMutableRawBufferPointer.allocate(byteCount: 248, alignment: 1)
    name.initializeMemory(as: UInt8.self, repeating: 0x6E)
    return UnsafeRawBufferPointer(name)
}()

func monotonicMilliseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000 + UInt64(time.tv_nsec) / 1_000_000
}
