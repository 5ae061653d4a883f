import CLinux
import ITCBOptions
import BLEHost

/// Byte helpers of the controller discovery (--udev-match, --list-controllers,
/// the device tree): paths and files as bytes in fixed buffers, no String,
/// Substring or array of them made on the way (each made, copied and released
/// at every use was most of these functions' code).

/// A NUL-terminated path built in one buffer (PATH_MAX with its NUL; a
/// longer one, which the system refuses, grows it: printed whole as given).
struct CPathBuffer: ~Copyable {
    var capacity = 4096
    var base: UnsafeMutablePointer<UInt8>
    var count = 0

    init() {
        base = .allocate(capacity: capacity)
        base[0] = 0
    }

    deinit { base.deallocate() }

    /// The C string, valid while this buffer lives: take it from a local
    /// (a temporary's buffer is freed as soon as the pointer is taken).
    var pointer: UnsafePointer<CChar> { UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self) }
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    @inline(never)
    mutating func append(_ piece: UnsafeRawBufferPointer) {
        if count + piece.count >= capacity {
            capacity = count + piece.count + 1
            let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
            larger.update(from: base, count: count)
            base.deallocate()
            base = larger
        }
        if let from = piece.baseAddress { (base + count).update(from: from.assumingMemoryBound(to: UInt8.self), count: piece.count) }
        count += piece.count
        base[count] = 0
    }

    @inline(never)
    mutating func append(byte: UInt8) {
        withUnsafeBytes(of: byte) { append($0) }
    }

    @inline(__always)
    mutating func append(_ literal: StaticString) { append(terminated: literal.utf8Start) }

    @inline(never)
    mutating func append(terminated start: UnsafePointer<UInt8>) {
        append(UnsafeRawBufferPointer(start: start, count: terminatedCount(start)))
    }

    /// Back to the first `count` bytes (a folder, before the next name in it).
    mutating func cut(to count: Int) {
        self.count = count
        base[count] = 0
    }

    @inline(never)
    mutating func append(string text: String) {
        withBytes(text) { append(UnsafeRawBufferPointer($0)) }
    }
}

/// A file read whole into a buffer of `limit` bytes (a longer one is cut
/// there); nil when it cannot be opened. The caller deallocates. Opened
/// non-blocking: a FIFO put where a file should be (no writer) reads as
/// empty rather than holding the open for ever.
@inline(never)
func readFileBytes(_ path: UnsafePointer<CChar>, limit: Int) -> UnsafeMutableRawBufferPointer? {
    let fd = clinux_open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: limit, alignment: 8)
    var done = 0
    while done < limit {
        let n = read(fd, buffer.baseAddress! + done, limit - done)
        if n <= 0 { break }
        done += n
    }
    return UnsafeMutableRawBufferPointer(rebasing: buffer[0..<done])
}

/// Ends a cell of a table (`forEachTableLine`): a NUL, which no cell holds.
struct CellEnd {}
let cellEnd = CellEnd()

extension BuiltText.Builder {
    /// `\(cellEnd)`: the cell ends here.
    @inline(never)
    mutating func appendInterpolation(_ end: CellEnd) { bytes.append(0) }

    /// `\(bytes: raw)`: the bytes as they are.
    @inline(never)
    mutating func appendInterpolation(bytes raw: UnsafeRawBufferPointer) { bytes.append(contentsOf: raw) }

    /// `\(escapedBytes: raw)`: UTF-8 bytes as `String.escaped` shows them (UntrustedText).
    @inline(never)
    mutating func appendInterpolation(escapedBytes raw: UnsafeRawBufferPointer) {
        UntrustedText.append(escaped: raw, to: &bytes)
    }

    /// `\(escapedC: path)`: a C string as `String(cString:).escaped` shows it.
    @inline(never)
    mutating func appendInterpolation(escapedC value: UnsafePointer<CChar>) { appendInterpolation(escaped: String(repairingCString: value)) }

    /// `\(text)`: a chipset's text (a model, a file name), no String made.
    @inline(never)
    mutating func appendInterpolation(_ text: Capacity.ChipsetText) { text.withBytes { bytes.append(contentsOf: $0) } }
}

/// The lines of a table of NUL-ended cells, `columns` (at most 6) a row, as
/// columns two spaces apart, each as wide as its widest cell (the last one
/// not padded); a cell's width is its count of Unicode scalars (its bytes
/// but UTF-8's continuation bytes: every cell is valid UTF-8).
@inline(never)
func forEachTableLine(_ cells: UnsafeRawBufferPointer, columns: Int, _ line: (UnsafeRawBufferPointer) -> Void) {
    var widths = InlineArray<6, Int>(repeating: 0)
    var column = 0, width = 0
    for byte in cells {
        if byte == 0 {
            widths[column] = max(widths[column], width)
            width = 0
            column = column == columns - 1 ? 0 : column + 1
        } else if byte & 0xC0 != 0x80 {
            width += 1
        }
    }
    var text: BuiltText = ""
    var start = 0
    column = 0
    width = 0
    for index in 0..<cells.count {
        let byte = cells[index]
        if byte != 0 {
            if byte & 0xC0 != 0x80 { width += 1 }
            continue
        }
        if column > 0 { text.spaces(2) }
        text.bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: cells[start..<index]))
        start = index + 1
        if column < columns - 1 {
            text.spaces(widths[column] - width)
            column += 1
        } else {
            text.bytes.withUnsafeBytes { line($0) }
            text = ""
            column = 0
        }
        width = 0
    }
}
