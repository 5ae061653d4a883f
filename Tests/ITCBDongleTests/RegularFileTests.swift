import Testing
import Glibc
@testable import ITCBDongle

/// The firmware and --btsnoop paths: a regular file is read or written; a
/// FIFO, a device, a directory, a symlink loop or a file over the limit is
/// refused at once, each by what it is (a FIFO used to hold open(2) forever).
@Suite struct RegularFileTests {
    /// A fresh temporary directory, removed with what the test made in it.
    final class Scratch {
        let path: String
        init() throws {
            var template = Array("/tmp/itcb-regularfile-XXXXXX".utf8CString)
            path = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }.map { String(cString: $0) })
        }
        deinit { _ = system("rm -rf '\(path)'") }

        func write(_ name: String, _ content: [UInt8]) throws -> String {
            let file = try #require(fopen("\(path)/\(name)", "wb"))
            #expect(fwrite(content, 1, content.count, file) == content.count)
            fclose(file)
            return "\(path)/\(name)"
        }
    }

    static func problem(reading path: String, limit: Int = 1 << 20) -> FileProblem? {
        do throws(FileProblem) {
            try readRegularFile(path, limit: limit).deallocate()
            return nil
        } catch {
            return error
        }
    }

    @Test func regularFileIsReadWholeAndRefusedOverTheLimit() throws {
        let scratch = try Scratch()
        let content: [UInt8] = [0x52, 0x65, 0x61, 0x6C, 0x74, 0x65, 0x63, 0x68, 0x00, 0xFF]
        let path = try scratch.write("fw.bin", content)
        #expect(ChipsetSetup.fileExists(path))
        let bytes = try readRegularFile(path, limit: content.count)
        #expect(Array(UnsafeRawBufferPointer(bytes)) == content)
        bytes.deallocate()
        #expect(Self.problem(reading: path, limit: content.count - 1) == .tooLarge(size: 10, limit: 9))
        #expect(FileProblem.tooLarge(size: 10, limit: 9).clause == "is 10 bytes, over the limit of 9 bytes")
        let empty = try scratch.write("empty.bin", [])
        let none = try readRegularFile(empty, limit: 4)
        #expect(none.count == 0)
        none.deallocate()
    }

    @Test func onlyAnAbsentFileIsMissing() throws {
        let scratch = try Scratch()
        #expect(Self.problem(reading: "\(scratch.path)/missing.bin") == .missing)
        #expect(!ChipsetSetup.fileExists("\(scratch.path)/missing.bin"))
        #expect(FileProblem.missing.clause == "is missing")
        #expect(FileProblem.missing.reason == "No such file or directory")
    }

    @Test func fifoDirectoryDeviceAndLoopAreRefusedByWhatTheyAre() throws {
        let scratch = try Scratch()
        let fifo = "\(scratch.path)/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        // No writer: a blocking open would never return.
        #expect(Self.problem(reading: fifo) == .notRegular("a FIFO (named pipe)"))
        #expect(Self.problem(reading: scratch.path) == .notRegular("a directory"))
        #expect(Self.problem(reading: "/dev/null") == .notRegular("a character device"))
        #expect(symlink("\(scratch.path)/b", "\(scratch.path)/a") == 0 && symlink("\(scratch.path)/a", "\(scratch.path)/b") == 0)
        #expect(Self.problem(reading: "\(scratch.path)/a") == .symlinkLoop)
        #expect(FileProblem.notRegular("a directory").clause == "is a directory, not a regular file")
        #expect(FileProblem.symlinkLoop.reason == "it is a loop of symbolic links")
        #expect(FileProblem.failed(EACCES).clause == "cannot be read: Permission denied")
    }

    @Test func btsnoopIsCreatedButNotOpenedOnAFifoOrADevice() throws {
        let scratch = try Scratch()
        let snoop = "\(scratch.path)/log.btsnoop"
        let writer = try BTSnoopWriter(path: snoop)
        writer.close()
        var info = stat()
        #expect(stat(snoop, &info) == 0 && info.st_size == 16)  // the header
        let fifo = "\(scratch.path)/live"
        #expect(mkfifo(fifo, 0o600) == 0)
        for (path, what) in [(fifo, "a FIFO (named pipe)"), ("/dev/null", "a character device")] {
            #expect(throws: TransportError.self) { try BTSnoopWriter(path: path) }
            do throws(TransportError) {
                _ = try BTSnoopWriter(path: path)
            } catch {
                #expect(error.description == "cannot write btsnoop file \(path): it is \(what), not a regular file")
            }
        }
        do throws(TransportError) {
            _ = try BTSnoopWriter(path: "\(scratch.path)/no/such/dir/x.btsnoop")
            Issue.record("a btsnoop file in a missing directory was opened")
        } catch {
            #expect(error.description.hasSuffix(": No such file or directory"))
        }
    }

    /// A listener whose backlog is full drops further SYNs: the connect gives up at its
    /// own deadline (the kernel's would be 130 s) and says so; a closed port fails at once.
    @Test func connectGivesUpAtItsOwnDeadline() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        #expect(withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(listener, $0, length) == 0 && listen(listener, 0) == 0 && getsockname(listener, $0, &length) == 0
        } })
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        var outcome = TCPTransport.Connecting.connected
        var took: UInt64 = 0
        // The first connections fill the queue (accepted by the kernel, never by us); then one hangs.
        for _ in 0..<8 {
            let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue), 0)
            sockets.append(s)
            let started = monotonicMilliseconds()
            outcome = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                TCPTransport.connect(s, $0, length, within: 300)
            } }
            took = monotonicMilliseconds() - started
            if outcome != .connected { break }
        }
        #expect(outcome == .failed("no answer within 0.3 s"))
        #expect(took >= 300 && took < 5_000)

        close(listener)
        let refused = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue), 0)
        sockets.append(refused)
        let result = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            TCPTransport.connect(refused, $0, length, within: 300)
        } }
        #expect(result == .failed("Connection refused"))
    }
}
