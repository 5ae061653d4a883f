import Glibc
import Testing
import BLEHost
@testable import ITCBDongle

/// The serial port's name says the rate it is at, after the controller's switch too.
@Suite struct SerialNameTests {
    @Test func aSwitchedPortIsNamedAtItsNewRate() throws {
        // A pseudo-terminal (grantpt/ptsname are not in Swift's Glibc): unlocked
        // with TIOCSPTLCK, its number from TIOCGPTN (asm-generic/ioctls.h).
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        var unlock: Int32 = 0, number: UInt32 = 0
        try #require(master >= 0)
        defer { close(master) }
        try #require(ioctl(master, 0x4004_5431, &unlock) == 0 && ioctl(master, 0x8004_5430, &number) == 0)
        let path = "/dev/pts/\(number)"
        let port = try SerialTransport(path: path, baud: 115_200, targetBaud: 3_000_000)
        defer { port.close() }
        #expect(port.description == "serial:\(path)@115200")
        // As the run loop reaches it: through the transport's capability, not the class.
        let link: Transport = port
        #expect(link.portRecovery != nil, "a subclass's capability, not the base class's nil")
        link.setupLink?.follow(SetupWishes(baudRate: 3_000_000))
        #expect(port.baud == 3_000_000)
        #expect(port.description == "serial:\(path)@3000000", "an exit 4 now names the rate the port is at")
    }
}
