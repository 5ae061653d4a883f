import CLinux

/// Why a path given for a file (a firmware file, the --btsnoop capture) was
/// not opened, said as what it is: a FIFO or a device could hold open(2) until
/// a peer comes (and with it SIGTERM), a directory or a loop is not a file.
enum FileProblem: Error, Equatable {
    // Every payload a literal or a number: a problem is copied and dropped
    // with no reference counting (a String kind made each copy retain it).
    /// ENOENT: nothing there.
    case missing
    /// Something other than a regular file: "a directory", "a FIFO", ….
    case notRegular(StaticString)
    /// ELOOP: the symbolic links lead back to themselves.
    case symlinkLoop
    /// Larger than the reader takes; both in bytes.
    case tooLarge(size: Int, limit: Int)
    /// Any other errno of open(2), stat(2) or read(2).
    case failed(Int32)

    static func == (a: FileProblem, b: FileProblem) -> Bool {
        switch (a, b) {
        case (.missing, .missing), (.symlinkLoop, .symlinkLoop): true
        case let (.notRegular(x), .notRegular(y)): strcmp(UnsafeRawPointer(x.utf8Start).assumingMemoryBound(to: CChar.self),
                                                          UnsafeRawPointer(y.utf8Start).assumingMemoryBound(to: CChar.self)) == 0
        case let (.tooLarge(x, l), .tooLarge(y, m)): x == y && l == m
        case let (.failed(x), .failed(y)): x == y
        default: false
        }
    }

    /// What is wrong, to follow the path in a line: "… is a FIFO, not a regular file".
    var clause: String {
        @inline(never) get {
            switch self {
            case .missing: "is missing"
            case .notRegular(let kind): built("is \(kind), not a regular file")
            case .symlinkLoop: "is a loop of symbolic links"
            case .tooLarge(let size, let limit): built("is \(size) bytes, over the limit of \(limit) bytes")
            case .failed(let code): built("cannot be read: \(ErrnoText(code: code))")
            }
        }
    }

    /// The same after "PATH: ": errno's own text, or "it is …".
    var reason: String {
        switch self {
        case .missing: String(repairingCString: strerror(ENOENT))
        case .failed(let code): String(repairingCString: strerror(code))
        default: built("it \(clause)")
        }
    }

    /// An errno of open(2) or stat(2) as a problem.
    static func from(errno code: Int32) -> FileProblem {
        switch code {
        case ENOENT: .missing
        case ELOOP: .symlinkLoop
        case EISDIR: .notRegular("a directory")
        default: .failed(code)
        }
    }

    /// What a stat(2) mode names in words; nil for a regular file.
    static func kind(of mode: mode_t) -> StaticString? {
        switch mode & mode_t(S_IFMT) {
        case mode_t(S_IFREG): nil
        case mode_t(S_IFDIR): "a directory"
        case mode_t(S_IFIFO): "a FIFO (named pipe)"
        case mode_t(S_IFCHR): "a character device"
        case mode_t(S_IFBLK): "a block device"
        case mode_t(S_IFSOCK): "a socket"
        default: "not a file"
        }
    }
}

/// Opens `path` only if it is a regular file (or, with O_CREAT, none yet):
/// stat(2) first, so a device is never opened at all; O_NONBLOCK, so a FIFO
/// put there since cannot block; then fstat(2) of what was opened.
func openRegularFile(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t = 0) throws(FileProblem) -> Int32 {
    var info = stat()
    if stat(path, &info) == 0 {
        if let kind = FileProblem.kind(of: info.st_mode) { throw .notRegular(kind) }
    } else if errno != ENOENT || flags & O_CREAT == 0 {
        throw .from(errno: errno)
    }
    let fd = clinux_open(path, flags | O_NONBLOCK | O_CLOEXEC, mode)
    guard fd >= 0 else {
        // ENXIO: a FIFO with no reader (or a socket) appeared since the stat.
        throw errno == ENXIO ? .notRegular("a FIFO or a socket") : .from(errno: errno)
    }
    if fstat(fd, &info) != 0 || FileProblem.kind(of: info.st_mode) != nil {
        let kind = FileProblem.kind(of: info.st_mode) ?? "not a file"
        sysClose(fd)
        throw .notRegular(kind)
    }
    return fd
}

/// A regular file read whole, at most `limit` bytes; the caller deallocates.
/// The path is a C string (a String argument is passed as one).
func readRegularFile(_ path: UnsafePointer<CChar>, limit: Int) throws(FileProblem) -> UnsafeMutableRawBufferPointer {
    let fd = try openRegularFile(path, O_RDONLY)
    defer { sysClose(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { throw .failed(errno) }
    let size = Int(info.st_size)
    guard size <= limit else { throw .tooLarge(size: size, limit: limit) }
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(size, 1), alignment: 8)
    var done = 0
    while done < size {
        let n = sysRead(fd, buffer.baseAddress! + done, size - done)
        if n < 0, errno == EINTR { continue }
        guard n > 0 else {
            // Shorter than its size said (cut while read) or unreadable (EIO).
            let code = n < 0 ? errno : EIO
            buffer.deallocate()
            throw .failed(code)
        }
        done += n
    }
    return UnsafeMutableRawBufferPointer(rebasing: buffer[0..<size])
}
