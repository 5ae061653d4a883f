import BLEHost

// Number formatting for log text written without allocation.

func appendDecimal<let n: Int>(_ value: UInt32, to out: inout FixedBytes<n>) {
    var digits = InlineArray<10, UInt8>(repeating: 0)
    var count = 0
    var v = value
    repeat {
        digits[count] = UInt8(ascii: "0") + UInt8(v % 10)
        v /= 10
        count += 1
    } while v > 0
    while count > 0 {
        count -= 1
        _ = out.append(digits[count])
    }
}

func appendHex<let n: Int>(_ value: UInt32, digits: Int, to out: inout FixedBytes<n>) {
    var shift = (digits - 1) * 4
    while shift >= 0 {
        let d = UInt8((value >> UInt32(shift)) & 0xF)
        _ = out.append(d < 10 ? UInt8(ascii: "0") + d : UInt8(ascii: "a") + d - 10)
        shift -= 4
    }
}

/// `text`, then `value` in decimal: the summaries' "label, number" pairs, one call each.
@inline(__always)
func append<let n: Int>(_ text: StaticString, decimal value: UInt32, to out: inout FixedBytes<n>) {
    appendTerminated(text.utf8Start, decimal: value, to: &out)
}

@inline(never)
func appendTerminated<let n: Int>(_ start: UnsafePointer<UInt8>, decimal value: UInt32, to out: inout FixedBytes<n>) {
    appendTerminated(start, to: &out)
    appendDecimal(value, to: &out)
}

func appendHex4<let n: Int>(_ value: UInt16, to out: inout FixedBytes<n>) {
    appendHex(UInt32(value), digits: 4, to: &out)
}

/// A literal: one pointer at each use (see `LogSink.text`).
@inline(__always)
func append<let n: Int>(_ text: StaticString, to out: inout FixedBytes<n>) { appendTerminated(text.utf8Start, to: &out) }

@inline(never)
func appendTerminated<let n: Int>(_ start: UnsafePointer<UInt8>, to out: inout FixedBytes<n>) {
    _ = out.append(UnsafeRawBufferPointer(start: start, count: terminatedCount(start)))
}
