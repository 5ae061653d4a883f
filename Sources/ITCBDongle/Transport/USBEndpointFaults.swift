import CLibUSB
import CLinux
import BLEHost
import Chipsets

/// What a USB endpoint can do wrong (a stall, babble) and how the transport recovers.
extension USBTransport {
    /// Babble: the device sent more than the transfer asked for (USB 2.0
    /// §5.8.3; usbfs -EOVERFLOW). The transfer's bytes are dropped unread and
    /// counted (a packet it cut into is lost with it); a warning for the 1st,
    /// 10th, 100th … so a babbling device cannot fill the journal.
    @inline(never)  // rare: kept off the receive path it is called from
    func babbled(_ endpoint: UInt8) {
        let isEvents = endpoint == eventEndpoint
        if isEvents { events.babbled() } else { aclIn.babbled() }
        let count = events.babbledTransfers + aclIn.babbledTransfers
        var power = 1
        while power < count { power *= 10 }
        if power == count {
            Log.warning("USB endpoint 0x\(hex(endpoint)) babbled (sent more than a transfer holds); transfer dropped (\(count) so far)")
        }
    }

    /// Clears the halt of each stalled endpoint once, then resubmits its
    /// transfers: IN ones as they were, a bulk OUT one with what the device had
    /// not taken yet (a STALL handshake means the packet was refused, so nothing
    /// is lost or sent twice). A stalled control transfer is a command the
    /// device refused: its packet is lost (the host's command timeout recovers).
    @inline(__always)
    func clearStalls() throws(TransportError) {
        if stalled.count > 0 { try clearStalledEndpoints() }
    }

    /// `clearStalls`' work, outlined: only a stall calls it, not each round of events.
    @inline(never)
    func clearStalledEndpoints() throws(TransportError) {
        var cleared = InlineArray<4, UInt8>(repeating: 0xFF)
        var clearedCount = 0
        while let transfer = stalled.popFirst() {
            let endpoint = transfer.pointee.endpoint
            var seen = false
            for i in 0..<clearedCount where cleared[i] == endpoint { seen = true }
            if !seen {
                if clearedCount < 4 {
                    cleared[clearedCount] = endpoint
                    clearedCount += 1
                }
                let clear = libusb_clear_halt(handle, endpoint)
                Log.repeated(.usbStall, key: UInt16(endpoint), .warning, "USB endpoint 0x\(hex(endpoint)) stalled; halt cleared (\(clear == 0 ? "ok" : libusbError(clear)))")
                if endpoint == eventEndpoint { events.reset() } else if endpoint == aclInEndpoint { aclIn.reset() }
                if endpoint == aclOutEndpoint { outStallsInARow += 1 }
            }
            if endpoint & 0x80 != 0 {
                try submit(transfer)
            } else if endpoint != 0, transfer.pointee.actual_length < transfer.pointee.length,
                      outStallsInARow <= USBTransport.outStallResends {
                // Whole USB packets were taken before the stall: send the rest.
                let taken = Int(transfer.pointee.actual_length)
                let rest = Int(transfer.pointee.length) - taken
                if taken > 0 {
                    UnsafeMutableRawPointer(transfer.pointee.buffer!).copyMemory(from: transfer.pointee.buffer! + taken, byteCount: rest)
                }
                transfer.pointee.length = Int32(rest)
                try submit(transfer)
            } else {
                release(transfer)
            }
        }
    }
}
