import CLinux
import BLEHost

/// A log line built in a fixed buffer and written with one write(2): the line
/// logged per question costs no allocation.
struct LogLine: ~Copyable {
    var buffer = Capacity.LogLineStore()

    /// Begun with the prefix (`writeLogPrefix`).
    init(_ level: LogLevel) {
        withUnsafeTemporaryAllocation(byteCount: 32, alignment: 1) { prefix in
            _ = buffer.append(UnsafeRawBufferPointer(rebasing: prefix[0 ..< writeLogPrefix(level, to: prefix.baseAddress!)]))
        }
    }

    @inline(never)
    mutating func terminated(_ start: UnsafePointer<UInt8>) {
        _ = buffer.append(UnsafeRawBufferPointer(start: start, count: terminatedCount(start)))
    }

    /// "0x" and lower-case hex digits, as String(radix: 16) prints them.
    mutating func hex(_ value: UInt16) {
        withUnsafeTemporaryAllocation(byteCount: 18, alignment: 1) { digits in
            digits[0] = 0x30
            digits[1] = 0x78
            let count = 2 + writeHex(UInt64(value), to: digits.baseAddress! + 2)
            _ = buffer.append(UnsafeRawBufferPointer(rebasing: digits[0 ..< count]))
        }
    }

    /// Bytes from a peer or a file, escaped (`UntrustedText`) straight into the
    /// line: one line stays one line and shows what was sent. The last byte of
    /// the buffer stays free for the newline; a value too long for the line is
    /// cut between two characters (an escape is kept whole or left out).
    mutating func value(_ raw: UnsafeRawBufferPointer) {
        withUnsafeMutablePointer(to: &buffer) { buffer in
            UntrustedText.escape(raw, wholeLine: false, into: buffer) { buffer, start, count in
                let buffer = buffer.assumingMemoryBound(to: Capacity.LogLineStore.self)
                let piece = UnsafeRawBufferPointer(start: start, count: count)
                let room = buffer.pointee.freeSpace - 1
                if piece.count <= room { return buffer.pointee.append(piece) }
                var cut = piece[0] == 0x5C ? 0 : max(0, room)
                while cut > 0, piece[cut] & 0xC0 == 0x80 { cut -= 1 }
                _ = buffer.pointee.append(UnsafeRawBufferPointer(rebasing: piece[0..<cut]))
                return false
            }
        }
    }

    mutating func write() {
        PromptLine.end()
        if !buffer.append(0x0A) {
            buffer.truncate(to: buffer.count - 1)
            buffer.append(0x0A)
        }
        buffer.withBytes { _ = sysWrite(2, $0.baseAddress, $0.count) }
    }
}

/// `value`'s decimal digits (ASCII, no sign), least significant first, and how
/// many: numbers as text without a String (log lines, the metrics file).
@inline(__always)
func decimalDigits(_ value: Int) -> (digits: InlineArray<20, UInt8>, count: Int) {
    var magnitude = value.magnitude
    var digits = InlineArray<20, UInt8>(repeating: 0)
    var count = 0
    repeat {
        digits[count] = 48 + UInt8(magnitude % 10)
        magnitude /= 10
        count += 1
    } while magnitude > 0
    return (digits, count)
}

extension LogLine: LogSink {
    mutating func decimal(_ value: Int) {
        if value < 0 { buffer.append(0x2D) }
        withUnsafeTemporaryAllocation(byteCount: 20, alignment: 1) { digits in
            let count = writeDecimal(UInt64(value.magnitude), to: digits.baseAddress!)
            _ = buffer.append(UnsafeRawBufferPointer(rebasing: digits[0 ..< count]))
        }
    }

    mutating func byte(_ value: UInt8) {
        let digits: StaticString = "0123456789ABCDEF"
        buffer.append(digits.utf8Start[Int(value >> 4)])
        buffer.append(digits.utf8Start[Int(value & 0xF)])
    }

    /// Built in a 17-byte stack buffer and appended once (on the line of every
    /// answered question: per-byte appends cost three times as much).
    mutating func address(_ address: BDAddress) {
        var text: (UInt64, UInt64, UInt8) = (0, 0, 0)
        withUnsafeMutableBytes(of: &text) { out in
            address.writeText(to: out.baseAddress!)
            _ = buffer.append(UnsafeRawBufferPointer(rebasing: out[0..<17]))
        }
    }

    mutating func string(_ value: String) {
        withBytes(value) { _ = buffer.append(UnsafeRawBufferPointer($0)) }
    }

    mutating func commandName(_ opcode: UInt16) { string(hciCommandName(opcode)) }
    mutating func companyName(_ identifier: UInt16) { string(nameOfCompany(identifier)) }
    mutating func coreVersion(_ version: UInt8) { string(coreVersionName(version)) }
    mutating func statusName(_ status: UInt8) { string(hciStatusName(status)) }
}

/// (The global name, out of reach of LogLine's hook of the same name.)
private func nameOfCompany(_ identifier: UInt16) -> String { companyName(identifier) }
