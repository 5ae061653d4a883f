import BLEHost

/// What the USB board does for a chipset whose quirks say `vendorControlOverUSB`
/// (MediaTek's, as Linux btusb/btmtk do it): a register command becomes a
/// vendor control request and its answer an event the steps read as if the
/// chip had sent it; any other WMT command goes as HCI and its answer is read
/// with `answerRequest`, again while it comes back empty.
public enum USBVendorControl {
    /// btmtk_usb_submit_wmt_recv_urb: vendor IN, request 1, value 0x30, 64 bytes.
    public static let answerRequest = USBControlRequest(requestType: 0xC0, request: 0x01, value: 0x30, index: 0, length: 64, data: 0)
    /// Between an empty answer read and the next (µs): Linux `btmtk_usb_wmt_recv`
    /// (btmtk.c, 6.11 on; btusb.c's `btusb_mtk_wmt_recv` before) waits 500 µs
    /// (`udelay` in the completion handler) before it asks again, "otherwise,
    /// the WMT event cannot return from the device successfully".
    public static let answerReaskGap: UInt32 = 500
    /// The same gap as the steps' pause (ms), timed by the driver's deadline, not
    /// a sleep: the core's clock counts whole milliseconds, read rounded down, so
    /// a pause of n ms may last just over n - 1; one more than the gap rounded up
    /// (2 ms, at least 1 ms real) keeps the 500 µs whatever the phase of the clock.
    /// (A literal: a computed static makes Embedded Swift's -no-allocations build fail.)
    public static let answerReaskPause: UInt64 = 2
    /// The event code of the answers.
    public static let answerEvent = MediaTekWMT.event

    /// The event the board hands the steps for an answer read that came back
    /// empty ("nothing yet"): the WMT event code with no parameters. The steps
    /// ask again after `answerReaskPause` with the command `isAnswerRead` knows.
    public static func isNothingYet(_ event: UnsafeRawBufferPointer) -> Bool {
        event.count == 2 && event[0] == answerEvent && event[1] == 0
    }

    /// Writes the "nothing yet" event (2 bytes) where an answer read's data lies.
    public static func nothingYet(into buffer: UnsafeMutablePointer<UInt8>) -> Int {
        buffer[0] = answerEvent
        buffer[1] = 0
        return 2
    }

    /// Writes the event for an answer read the chip refused (3 bytes): a WMT
    /// answer cut short, which ends the steps (not a timeout).
    public static func refusedAnswer(into buffer: UnsafeMutablePointer<UInt8>) -> Int {
        buffer[0] = answerEvent
        buffer[1] = 1
        buffer[2] = 0
        return 3
    }

    /// The steps' "read the answer again": a WMT command with no parameters,
    /// which the USB board sends as `answerRequest`, not as HCI. Only a USB
    /// board hands the steps a "nothing yet", so only it is ever asked this.
    public static func answerRead(into packet: inout Capacity.HCIPacket) {
        packet.setCommand(MediaTekWMT.opcode)
    }

    /// Whether an H4 packet is the steps' `answerRead`.
    public static func isAnswerRead(_ packet: UnsafeRawBufferPointer) -> Bool {
        packet.count == 4 && packet[0] == 0x01 && packet[1] == UInt8(MediaTekWMT.opcode & 0xFF)
            && packet[2] == UInt8(MediaTekWMT.opcode >> 8) && packet[3] == 0
    }

    /// Whether an H4 command is one whose answer is read through control IN.
    public static func answeredThroughControl(_ packet: UnsafeRawBufferPointer) -> Bool {
        packet.count >= 6 && packet[1] == UInt8(MediaTekWMT.opcode & 0xFF) && packet[2] == UInt8(MediaTekWMT.opcode >> 8)
    }

    /// The control request for a register command (H4 framed); nil for other packets.
    /// The id space is read with request 0x63 (type 0xC0), the UHW space with
    /// 0x01 (type 0xDE) and written with 0x02 (type 0x5E); value and index are
    /// the address's halves.
    public static func registerRequest(_ packet: UnsafeRawBufferPointer) -> USBControlRequest? {
        guard answeredThroughControl(packet), packet[5] == MediaTekWMT.register, packet.count >= 14 else { return nil }
        let space = packet[8], write = packet[9] == MediaTekWMT.write
        let address = MediaTekRAMCode.u32(packet, 10)
        let value = write && packet.count >= 18 ? MediaTekRAMCode.u32(packet, 14) : 0
        let type: UInt8 = write ? 0x5E : (space == MediaTekWMT.idSpace ? 0xC0 : 0xDE)
        let request: UInt8 = write ? 0x02 : (space == MediaTekWMT.idSpace ? 0x63 : 0x01)
        return USBControlRequest(requestType: type, request: request, value: UInt16(address >> 16),
                                 index: UInt16(truncatingIfNeeded: address), length: 4, data: value)
    }

    /// The answer a register command gets (the event the steps read): status 0
    /// and the value read, or status 1 when the request failed.
    public static func registerAnswer(ok: Bool, value: UInt32, into buffer: UnsafeMutablePointer<UInt8>) -> Int {
        let bytes: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (MediaTekWMT.event, 10, 2, MediaTekWMT.register, 6, 0, 0)
        withUnsafeBytes(of: bytes) { UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress!, byteCount: 7) }
        buffer[7] = ok ? 0 : 1
        for i in 0..<4 { buffer[8 + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) }
        return 12
    }
}
