import CLinux

/// `value` as Swift's `description` prints it ("0.5", "1e-05", "1e+16",
/// "-2.5", "nan"), from libc's correctly rounded "%.*e" digits: the fewest
/// significant digits that strtod(3) reads back as `value` (the shortest
/// round trip, the nearest of that length), placed as Swift places them
/// (exponential below 0.0001 and above 2^53). Swift's own formatter
/// (`_Float64ToASCII`) is 3 KB of the binary, for the few numbers an option
/// or a message shows. `whole`: a whole number without its ".0" ("5";
/// `formatNumber`'s, below 10^15, not 0).
func doubleText(_ value: Double, whole: Bool = false) -> String {
    if value.isNaN { return "nan" }
    if value.isInfinite { return value < 0 ? "-inf" : "inf" }
    if value == 0 { return value.sign == .minus ? "-0.0" : "0.0" }
    // One stack buffer: printf's text and strtod's at 0, the result at 32.
    return withUnsafeTemporaryAllocation(byteCount: 64, alignment: 1) { raw in
        let c = raw.baseAddress!.assumingMemoryBound(to: CChar.self)
        // The digits: mantissa × 10^scale, the shortest that reads back.
        var mantissa: UInt64 = 0
        var scale = 0
        for precision in 0 ... 16 {
            // "-d.ddde+XX": precision + 1 digits.
            _ = clinux_format_exponential(c, 32, Int32(precision), value)
            mantissa = 0
            var exponent = 0
            var negativeExponent = false
            var inExponent = false
            var index = 0
            while raw[index] != 0 {
                let byte = raw[index]
                if byte == UInt8(ascii: "e") { inExponent = true }
                if byte == UInt8(ascii: "-"), inExponent { negativeExponent = true }
                if byte >= 0x30, byte <= 0x39 {
                    if inExponent { exponent = exponent * 10 + Int(byte - 0x30) } else { mantissa = mantissa * 10 + UInt64(byte - 0x30) }
                }
                index += 1
            }
            scale = (negativeExponent ? -exponent : exponent) - precision
            // The nearest of this length; where it does not read back, its
            // neighbour on the other side of `value` may (at a power of two,
            // where the doubles below are closer together than above).
            if precision == 16 || readsBack(mantissa, scale, value, raw) { break }
            if readsBack(mantissa + 1, scale, value, raw) { mantissa += 1; break }
            if mantissa > 1, readsBack(mantissa - 1, scale, value, raw) { mantissa -= 1; break }
        }
        while mantissa % 10 == 0 {
            mantissa /= 10
            scale += 1
        }
        let count = decimal(mantissa, into: raw, at: 0)  // the digits at 0
        let exponent = scale + count - 1  // of the first digit: d.ddd × 10^exponent
        var end = 32
        func put(_ byte: UInt8) {
            raw[end] = byte
            end += 1
        }
        if value < 0 { put(UInt8(ascii: "-")) }
        if exponent < -4 || value.magnitude > 9007199254740992 {  // 2^53
            put(raw[0])
            if count > 1 {
                put(UInt8(ascii: "."))
                for i in 1 ..< count { put(raw[i]) }
            }
            put(UInt8(ascii: "e"))
            put(exponent < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
            if exponent.magnitude < 10 { put(UInt8(ascii: "0")) }
            end += decimal(UInt64(exponent.magnitude), into: raw, at: end)
        } else {
            // Place by place, 10^place, from the units (or the first digit) down
            // to the last digit, or to the tenths ("0.05", "12.25", "100.0").
            var place = max(exponent, 0)
            let last = min(exponent - count + 1, whole ? 0 : -1)
            while place >= last {
                let digit = exponent - place
                put(digit >= 0 && digit < count ? raw[digit] : UInt8(ascii: "0"))
                if place == 0, last < 0 { put(UInt8(ascii: ".")) }
                place -= 1
            }
        }
        return String(repairingUTF8: UnsafeRawBufferPointer(rebasing: raw[32 ..< end]))
    }
}

/// `value`'s decimal digits written at `offset`; how many.
private func decimal(_ value: UInt64, into raw: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
    writeDecimal(value, to: raw.baseAddress! + offset)
}

/// `value`'s decimal digits (ASCII, no sign) written at `out`, up to 20; how
/// many. The one decimal writer of BuiltText, LogLine and doubleText.
@inline(never)
func writeDecimal(_ value: UInt64, to out: UnsafeMutableRawPointer) -> Int {
    var count = 0
    var rest = value
    repeat {
        count += 1
        rest /= 10
    } while rest > 0
    rest = value
    var index = count
    while index > 0 {
        index -= 1
        out.storeBytes(of: 0x30 + UInt8(rest % 10), toByteOffset: index, as: UInt8.self)
        rest /= 10
    }
    return count
}

/// `value`'s lower-case hex digits, no leading zeros (as String(value,
/// radix: 16)), written at `out`, up to 16; how many. The one hex writer of
/// BuiltText and LogLine.
@inline(never)
func writeHex(_ value: UInt64, to out: UnsafeMutableRawPointer) -> Int {
    let digits: StaticString = "0123456789abcdef"
    var shift = 60
    while shift > 0, (value >> UInt64(shift)) & 0xF == 0 { shift -= 4 }
    var count = 0
    while shift >= 0 {
        out.storeBytes(of: digits.utf8Start[Int((value >> UInt64(shift)) & 0xF)], toByteOffset: count, as: UInt8.self)
        count += 1
        shift -= 4
    }
    return count
}

/// Whether strtod(3) reads `mantissa`e`scale` as `value`'s magnitude.
private func readsBack(_ mantissa: UInt64, _ scale: Int, _ value: Double, _ raw: UnsafeMutableRawBufferPointer) -> Bool {
    var end = decimal(mantissa, into: raw, at: 0)
    raw[end] = UInt8(ascii: "e")
    end += 1
    if scale < 0 {
        raw[end] = UInt8(ascii: "-")
        end += 1
    }
    end += decimal(UInt64(scale.magnitude), into: raw, at: end)
    raw[end] = 0
    return strtod(raw.baseAddress!.assumingMemoryBound(to: CChar.self), nil) == value.magnitude
}
