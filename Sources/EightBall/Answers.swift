import BLEHost

/// The 20 answers: what the ITCB apps send (slugs, `SLUG-ANSWER-00`…`19`) and
/// show (phrases); `--answers` picks which one goes out (docs/COMMAND-LINE.md).
public enum Answers {
    public static let count = 20

    /// "SLUG-ANSWER-NN" for index NN. Inlinable, like `phrase(_:into:)`: callers in
    /// other modules (the run loop's answer line) get it specialised for their
    /// buffer, not the generic entry point with its metadata lookups per call.
    @inlinable public static func slug<let n: Int>(_ index: Int, into buffer: inout FixedBytes<n>) {
        let prefix: StaticString = "SLUG-ANSWER-"
        _ = prefix.withUTF8Buffer { buffer.append(UnsafeRawBufferPointer($0)) }
        buffer.append(UInt8(48 + index / 10))
        buffer.append(UInt8(48 + index % 10))
    }

    /// The answer index of a slug, or nil when the bytes are not one of the 20.
    public static func index(ofSlug bytes: UnsafeRawBufferPointer) -> Int? {
        var expected = FixedBytes<16>()
        for index in 0..<count {
            expected.removeAll()
            slug(index, into: &expected)
            if expected.equals(bytes) { return index }
        }
        return nil
    }

    /// The English phrase (UTF-8; note the en dash in 03 and the typographic
    /// apostrophe in 15, as in the ITCB apps' localization).
    public static func phrase(_ index: Int) -> StaticString {
        switch index {
        case 0: "It is certain."
        case 1: "It is decidedly so."
        case 2: "Without a doubt."
        case 3: "Yes – definitely."
        case 4: "You may rely on it."
        case 5: "As I see it, yes."
        case 6: "Most likely."
        case 7: "Outlook good."
        case 8: "Yes."
        case 9: "Signs point to yes."
        case 10: "Reply hazy, try again."
        case 11: "Ask again later."
        case 12: "Better not tell you now."
        case 13: "Cannot predict now."
        case 14: "Concentrate and ask again."
        case 15: "Don’t count on it."
        case 16: "My reply is no."
        case 17: "My sources say no."
        case 18: "Outlook not so good."
        default: "Very doubtful."
        }
    }

    @inlinable public static func phrase<let n: Int>(_ index: Int, into buffer: inout FixedBytes<n>) {
        _ = phrase(index).withUTF8Buffer { buffer.append(UnsafeRawBufferPointer($0)) }
    }

    /// Answer `index` as it goes on the air in `style`.
    @inlinable public static func value<let n: Int>(_ index: Int, style: AnswerStyle, into buffer: inout FixedBytes<n>) {
        switch style {
        case .slug: slug(index, into: &buffer)
        case .text: phrase(index, into: &buffer)
        }
    }

    /// The index of an answer given either as a slug or as its English phrase.
    public static func index(of bytes: UnsafeRawBufferPointer) -> Int? {
        if let index = index(ofSlug: bytes) { return index }
        for index in 0..<count {
            let matches = phrase(index).withUTF8Buffer { valuesMatch(UnsafeRawBufferPointer($0), bytes) }
            if matches { return index }
        }
        return nil
    }
}

func valuesMatch(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    guard a.count == b.count else { return false }
    for i in 0..<a.count where a[i] != b[i] { return false }
    return true
}
