import CLinux

/// BTSnoop packet log (RFC 1761-style header, datalink 1002 = HCI UART/H4), as
/// written by btmon and read by Wireshark and tshark.
final class BTSnoopWriter {
    let fd: Int32
    let path: String
    /// Set after the first failed write (a full disk): warned once, then no more logging.
    var failed = false
    /// The file's length up to the end of the last whole record: a write that
    /// fails part-way is cut back to it, so readers never meet a torn record.
    var committed: Int = 0
    /// Microseconds between 0000-01-01 and 1970-01-01, the BTSnoop epoch.
    static let epochOffset: UInt64 = 0x00DC_DDB3_0F2F_8000

    init(path: String) throws(TransportError) {
        self.path = path
        // A regular file only: a FIFO would hold the start (and SIGTERM) in open(2)
        // until a reader came, and a torn record cannot be cut back off a pipe or a device.
        do throws(FileProblem) {
            fd = try openRegularFile(cPath(path), O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        } catch {
            throw .unavailable("cannot write btsnoop file \(path): \(error.reason)")
        }
        // "btsnoop\0", version 1, datalink 1002 (H4), big-endian: on the stack, no arrays.
        var header: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)
            = (0x62, 0x74, 0x73, 0x6E, 0x6F, 0x6F, 0x70, 0, 0, 0, 0, 1, 0, 0, 0x03, 0xEA)
        withUnsafeBytes(of: &header) { bytes in
            let written = sysWrite(fd, bytes.baseAddress, bytes.count)
            let error = written < 0 ? errno : 0
            finish(bytes, from: written, error: error)
        }
    }

    /// The rest of a write that was short: a full disk takes what fits and
    /// says why only on the next call (ENOSPC), so the remainder is written
    /// until it is done or a call fails with its own errno. A failure cuts the
    /// file back to the last whole record.
    func finish(_ bytes: UnsafeRawBufferPointer, from written: Int, error: Int32) {
        var done = max(written, 0)
        var reason = error
        while reason == 0, done < bytes.count {
            let n = sysWrite(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                reason = errno  // read right after the call that failed
            } else if n == 0 {
                reason = ENOSPC
            } else {
                done += n
            }
        }
        if reason == 0 {
            committed += bytes.count
            return
        }
        _ = ftruncate(fd, off_t(committed))
        _ = lseek(fd, off_t(committed), SEEK_SET)
        writeFailed(reason)
    }

    /// A write failed (ENOSPC on a full disk, EIO, …): the packet log is lost,
    /// the appliance is not. Said once; nothing more is written.
    func writeFailed(_ code: Int32) {
        guard !failed else { return }
        failed = true
        let reason = code == ENOSPC ? "disk full" : String(repairingCString: strerror(code))
        Log.warning("btsnoop: cannot write \(path) (\(reason)); packet logging stopped at the last whole record, still serving")
    }

    /// Logs one H4 packet (indicator byte included).
    func record(_ packet: UnsafeRawBufferPointer, received: Bool) {
        guard let type = packet.first else { return }
        record(type, UnsafeRawBufferPointer(rebasing: packet[1...]), received: received)
    }

    /// Logs one packet given without its indicator: one writev, no allocation.
    func record(_ type: UInt8, _ packet: UnsafeRawBufferPointer, received: Bool) {
        guard !failed else { return }
        var flags: UInt32 = received ? 1 : 0
        if type == 0x01 || type == 0x04 { flags |= 2 }  // command or event
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let micros = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec / 1000) + BTSnoopWriter.epochOffset
        let length = UInt32(packet.count + 1)
        // Record header (lengths, flags, drops, timestamp; big-endian) and the indicator.
        var header: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt8) = (
            length.bigEndian, length.bigEndian, flags.bigEndian, 0,
            UInt32(micros >> 32).bigEndian, UInt32(micros & 0xFFFF_FFFF).bigEndian, type)
        withUnsafeBytes(of: &header) { head in
            var parts = (
                iovec(iov_base: UnsafeMutableRawPointer(mutating: head.baseAddress), iov_len: 25),
                iovec(iov_base: UnsafeMutableRawPointer(mutating: packet.baseAddress), iov_len: packet.count))
            let written = withUnsafeBytes(of: &parts) { writev(fd, $0.baseAddress!.assumingMemoryBound(to: iovec.self), 2) }
            if written == 25 + packet.count {
                committed += written
                return
            }
            let error = written < 0 ? errno : 0
            recordFailed(head: UnsafeRawBufferPointer(rebasing: head[0..<25]), packet, written: written, error: error)
        }
    }

    /// A record's writev that was short or failed: the rest is written (or the
    /// file cut back to the last whole record) with the reason of the call that failed.
    func recordFailed(head: UnsafeRawBufferPointer, _ packet: UnsafeRawBufferPointer, written: Int, error: Int32) {
        var record = [UInt8](head)
        record += packet
        record.withUnsafeBytes { finish($0, from: written, error: error) }
    }

    func close() { sysClose(fd) }
}
