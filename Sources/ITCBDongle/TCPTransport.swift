import CLinux
import Chipsets

/// H4 over TCP: Bumble's and Android's virtual controllers (`tcp:HOST:PORT`).
final class TCPTransport: DescriptorTransport {

    init(host: String, port: UInt16) throws(TransportError) {
        let description = "tcp:\(host):\(port)"
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>? = nil
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let first = result else {
            throw .unavailable("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(result) }
        var lastError = "no address"
        var info: UnsafeMutablePointer<addrinfo>? = first
        var connected: Int32 = -1
        while let current = info {
            let s = socket(current.pointee.ai_family, current.pointee.ai_socktype, current.pointee.ai_protocol)
            if s >= 0 {
                if connect(s, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 {
                    connected = s
                    break
                }
                lastError = errnoString()
                sysClose(s)
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
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }
}
