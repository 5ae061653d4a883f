import Testing
import BLEHost
@testable import Chipsets

// The chipsets' error texts are lists in one literal each (ListedText), picked
// by the error's raw value: one text per case, in the order of the cases.

func texts<E: RawRepresentable>(_ type: E.Type, _ text: (E) -> ListedText) -> [String] where E.RawValue == UInt8 {
    var all: [String] = []
    while let error = E(rawValue: UInt8(all.count)) { all.append(String(decoding: text(error).bytes, as: UTF8.self)) }
    return all
}

@Suite struct ListedTextTests {
    @Test func everyErrorHasItsOwnText() {
        for (name, list, listed) in [
            ("Intel", texts(IntelError.self) { $0.text }, IntelError.notIntel.text.count),
            ("Realtek", texts(RealtekError.self) { $0.text }, RealtekError.fileTooShort.text.count),
            ("MediaTek", texts(MediaTekError.self) { $0.text }, MediaTekError.fileTooShort.text.count),
            ("Broadcom", texts(BroadcomError.self) { $0.text }, BroadcomError.emptyFile.text.count),
        ] {
            #expect(list.count == listed, "\(name): \(list.count) cases, \(listed) texts")
            #expect(!list.contains(""), "\(name): an empty text")
            #expect(Set(list).count == list.count, "\(name): a text twice (a case's text missing, the next one shifted?)")
        }
    }

    @Test func theTextsAreTheCases() {
        #expect(String(decoding: IntelError.notIntel.text.bytes, as: UTF8.self) == "Read Version did not describe an Intel controller")
        #expect(String(decoding: IntelError.intermediateLoaderStep.text.bytes, as: UTF8.self)
                == "this chip boots an intermediate loader before its firmware, a step not supported yet")
        #expect(String(decoding: RealtekError.configMissing.text.bytes, as: UTF8.self) == "config file required but missing")
        #expect(String(decoding: MediaTekError.answerNeverCame.text.bytes, as: UTF8.self)
                == "controller's WMT answer never came (its answer reads stayed empty for 5 s)")
        #expect(String(decoding: BroadcomError.baudRateRefused.text.bytes, as: UTF8.self) == "controller refused Update UART Baud Rate")
        #expect(String(decoding: ListedText.unexpectedAnswer.bytes, as: UTF8.self) == "unexpected answer")
    }

    @Test func pastTheEndIsEmpty() {
        #expect(ListedText("one\0two\0", 2).bytes.isEmpty)
        #expect(ListedText("", 0).bytes.isEmpty)
        #expect(String(decoding: ListedText("one\0two\0", 1).bytes, as: UTF8.self) == "two")
        #expect(String(decoding: ListedText("one\0two", 1).bytes, as: UTF8.self) == "two")
    }
}
