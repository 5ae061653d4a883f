import BLEHost
import Testing
import TestSupport
@testable import EightBall

@Suite struct AnswersTests {
    @Test func slugsAndPhrases() {
        var slug = FixedBytes<16>()
        Answers.slug(7, into: &slug)
        #expect(slug.bytes == Array("SLUG-ANSWER-07".utf8))
        var phrase = FixedBytes<32>()
        Answers.phrase(3, into: &phrase)
        #expect(phrase.bytes == Array("Yes – definitely.".utf8))
        phrase.removeAll()
        Answers.phrase(15, into: &phrase)
        #expect(phrase.bytes == Array("Don’t count on it.".utf8))
        for index in 0..<20 {
            var s = FixedBytes<16>()
            Answers.slug(index, into: &s)
            #expect(s.withBytes { Answers.index(ofSlug: $0) } == index)
            var p = FixedBytes<32>()
            Answers.phrase(index, into: &p)
            #expect(p.withBytes { Answers.index(of: $0) } == index)
        }
        #expect(Array("SLUG-ANSWER-20".utf8).withRaw { Answers.index(of: $0) } == nil)
        #expect(Array("slug-answer-01".utf8).withRaw { Answers.index(of: $0) } == nil)
    }

    @Test func seededPickerIsReproducibleAndCoversAllAnswers() {
        var a = AnswerPicker(seed: 42), b = AnswerPicker(seed: 42), c = AnswerPicker(seed: 43)
        let first = (0..<50).map { _ in a.next() }
        #expect(first == (0..<50).map { _ in b.next() })
        #expect(first != (0..<50).map { _ in c.next() })
        var seen = Set<Int>()
        var d = AnswerPicker(seed: 0)
        for _ in 0..<2000 { seen.insert(d.next()) }
        #expect(seen == Set(0..<20))
    }
}
