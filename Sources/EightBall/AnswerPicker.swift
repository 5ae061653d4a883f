import BLEHost

/// Reproducible answer choice (--seed): xorshift64*, no clock, no heap.
public struct AnswerPicker {
    var state: UInt64

    public init(seed: UInt64) {
        // SplitMix64 step so that small seeds (0, 1, 2) still give well-mixed states.
        var z = seed &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z &>> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z &>> 27)) &* 0x94D0_49BB_1331_11EB
        z = z ^ (z &>> 31)
        state = z == 0 ? 0x2545_F491_4F6C_DD1D : z
    }

    public mutating func next() -> Int {
        state ^= state &>> 12
        state ^= state &<< 25
        state ^= state &>> 27
        let value = state &* 0x2545_F491_4F6C_DD1D
        return Int(truncatingIfNeeded: (value &>> 32) % 20)
    }
}
