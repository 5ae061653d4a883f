import CLinux

/// H4 over TCP: Bumble's and Android's virtual controllers (`tcp:HOST:PORT`).
final class TCPTransport: DescriptorTransport {

    init(host: String, port: UInt16) throws(TransportError) {
        let description = built("tcp:\(host):\(port)")
        // A numeric address (127.0.0.1, ::1: the usual virtual controller)
        // needs no resolver: getaddrinfo's name-service code put about 200 kB
        // more of libc in the resident set (docs/PERFORMANCE.md).
        var result = clinux_numeric_address(cPath(host), port)
        let resolved = result == nil
        var status: Int32 = 0
        if resolved {
            var hints = addrinfo()
            hints.ai_family = AF_UNSPEC
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            status = getaddrinfo(cPath(host), cPath(String(port)), &hints, &result)
        }
        guard status == 0, let first = result else {
            throw .unavailable("cannot resolve \(host): \(String(repairingCString: gai_strerror(status)))")
        }
        defer { if resolved { freeaddrinfo(result) } }
        var lastError = "no address"
        var info: UnsafeMutablePointer<addrinfo>? = first
        var connected: Int32 = -1
        while let current = info {
            let s = socket(current.pointee.ai_family, current.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue),
                           current.pointee.ai_protocol)
            if s >= 0 {
                switch TCPTransport.connect(s, current.pointee.ai_addr, current.pointee.ai_addrlen) {
                case .connected:
                    connected = s
                case .stopped:
                    sysClose(s)
                    throw .unavailable("stopped while connecting to controller at \(host):\(port)")
                case .failed(let why):
                    lastError = why
                    sysClose(s)
                }
                if connected >= 0 { break }
            }
            info = current.pointee.ai_next
        }
        guard connected >= 0 else {
            throw .unavailable("cannot connect to controller at \(host):\(port): \(lastError) (is the virtual controller running?)")
        }
        super.init(fd: connected, description: description)
        // Without TCP_NODELAY, Nagle + delayed ACK add ~40 ms to every ATT round trip.
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// How long a connect may take: a host that drops SYNs would otherwise hold it for the kernel's 130 s.
    static let connectTimeout: Int32 = 5_000

    enum Connecting: Equatable { case connected, stopped, failed(String) }

    /// connect(2) on a non-blocking socket, waited for in poll beside the signal
    /// pipe: a SIGINT/SIGTERM ends it at once, and it gives up after `timeout` ms.
    static func connect(_ s: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t,
                        within timeout: Int32 = connectTimeout) -> Connecting {
        if CLinux.connect(s, address, length) == 0 { return .connected }
        guard errno == EINPROGRESS || errno == EINTR else { return .failed(errnoString()) }
        let end = monotonicMilliseconds() + UInt64(timeout)
        while true {
            let now = monotonicMilliseconds()
            guard now < end else { return .failed(built("no answer within \(formatNumber(Double(timeout) / 1000)) s")) }
            switch Signals.sleep(Int32(end - now), watching: s, for: POLLOUT) {
            case .stop: return .stopped
            case .timedOut: continue
            case .ready:
                var error: Int32 = 0
                var size = socklen_t(MemoryLayout<Int32>.size)
                guard getsockopt(s, SOL_SOCKET, SO_ERROR, &error, &size) == 0 else { return .failed(errnoString()) }
                return error == 0 ? .connected : .failed(String(repairingCString: strerror(error)))
            }
        }
    }
}
