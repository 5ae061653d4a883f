import CLinux
import BLEHost

/// The static random address used when the controller has no public address:
/// derived from /etc/machine-id and the role and name, so it stays the same
/// across restarts without writing state (phones that remember the 8-Ball find
/// it again; docs/COMMAND-LINE.md, `--address`), and differs between kiosks.
/// A static device address: the two top bits set (Core Vol 6 Part B §1.3.2.1).
func derivedStaticAddress(role: String, name: String) -> BDAddress {
    role.withBytes { role in name.withBytes { name in derivedStaticAddress(role: role.assumingMemoryBound(to: UInt8.self), name: name.assumingMemoryBound(to: UInt8.self)) } }
}

/// The same over the role's and the name's bytes (the command line's, where they lie).
func derivedStaticAddress(role: UnsafeBufferPointer<UInt8>, name: UnsafeBufferPointer<UInt8>) -> BDAddress {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325  // FNV-1a 64
    func mix(_ bytes: UnsafeBufferPointer<UInt8>) {
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
    }
    let machine = readSmallFile("/etc/machine-id") ?? hostName()
    machine.withBytes { mix($0.assumingMemoryBound(to: UInt8.self)) }
    hash = hash &* 0x0000_0100_0000_01B3  // a 0 byte between
    mix(role)
    hash = hash &* 0x0000_0100_0000_01B3
    mix(name)
    return BDAddress.staticRandom(from: hash ^ (hash >> 48))
}

/// The first line of a small file (at most 255 bytes), white space trimmed;
/// nil when it cannot be read or is empty. open(2) and read(2), not stdio:
/// fopen and fgets put about 100 kB more of libc in the resident set
/// (docs/PERFORMANCE.md, "A numeric address needs no resolver").
func readSmallFile(_ path: String) -> String? {
    let fd = clinux_open(cPath(path), O_RDONLY | O_CLOEXEC, 0)
    guard fd >= 0 else { return nil }
    defer { sysClose(fd) }
    // In a buffer on the stack: no array. Its 256th byte stays the NUL.
    return withCBuffer { buffer in
        let count = sysRead(fd, buffer, 255)
        guard count > 0 else { return nil }
        for i in 0 ..< count where buffer[i] == 0x0A {
            buffer[i] = 0
            break
        }
        let text = string(fromCString: buffer).trimmingCharacters()
        return text.isEmpty ? nil : text
    }
}

func hostName() -> String {
    withCBuffer { buffer in
        gethostname(buffer, 255)
        return string(fromCString: buffer)
    }
}

/// 256 zeroed bytes on the stack for a C call to fill.
@inline(__always)
private func withCBuffer<R>(_ body: (UnsafeMutablePointer<CChar>) -> R) -> R {
    var bytes: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    return withUnsafeMutableBytes(of: &bytes) { body($0.baseAddress!.assumingMemoryBound(to: CChar.self)) }
}

/// The text of a NUL-terminated C buffer (up to the first NUL; at most 256 bytes).
@inline(never)
func string(fromCString buffer: UnsafePointer<CChar>) -> String {
    var end = 0
    while end < 256, buffer[end] != 0 { end += 1 }
    return String(decoding: UnsafeRawBufferPointer(start: buffer, count: end), as: UTF8.self)
}
