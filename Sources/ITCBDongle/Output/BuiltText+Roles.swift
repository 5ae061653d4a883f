import BLEHost
import EightBall

/// Pieces the roles, output and metrics interpolate (helper area C).
extension BuiltText.Builder {
    /// `\(cString: path)`: a NUL-terminated path kept as bytes, without its NUL.
    @inline(never)
    mutating func appendInterpolation(cString value: [CChar]) {
        value.withUnsafeBytes { bytes.append(contentsOf: UnsafeRawBufferPointer(start: $0.baseAddress, count: max($0.count - 1, 0))) }
    }
}

extension BuiltText.Builder {
    /// `\(address)`: "AA:BB:CC:DD:EE:FF" written straight in (as `BDAddress.string`, no String made).
    @inline(never)
    mutating func appendInterpolation(_ address: BDAddress) {
        withUnsafeTemporaryAllocation(byteCount: 17, alignment: 1) { out in
            address.writeText(to: out.baseAddress!)
            bytes.append(contentsOf: UnsafeRawBufferPointer(out))
        }
    }

    /// `\(escaped: name)`: bytes heard over the air as `FixedBytes.escaped` shows them.
    @inline(never)
    mutating func appendInterpolation<let n: Int>(escaped value: FixedBytes<n>) {
        value.withBytes { appendInterpolation(escapedBytes: $0) }
    }
}

extension BuiltText.Builder {
    /// `\(jsonAddress: address)`: inside a JSON string's quotes, the address or nothing (not yet known).
    @inline(never)
    mutating func appendInterpolation(jsonAddress address: BDAddress?) {
        if let address { appendInterpolation(address) }
    }
}

extension BuiltText.Builder {
    /// `\(slug: answer)`: the answer's slug as a JSON string (letters, digits
    /// and hyphens: nothing to escape), or `null`; no String made of it.
    @inline(never)
    mutating func appendInterpolation(slug answer: Int?) {
        guard let answer else { return appendLiteral("null") }
        var slug = FixedBytes<16>()
        Answers.slug(answer, into: &slug)
        bytes.append(0x22)
        slug.withBytes { bytes.append(contentsOf: $0) }
        bytes.append(0x22)
    }
}
