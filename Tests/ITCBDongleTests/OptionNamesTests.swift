import Testing
import ITCBOptions

/// `OptionName.names`, the bytes `OptionName.named` reads, against the cases.
@Suite struct OptionNamesTests {
    @Test func namesAreTheCasesRawValuesInOrder() {
        let text = String(decoding: UnsafeBufferPointer(start: OptionName.names.utf8Start,
                                                        count: OptionName.names.utf8CodeUnitCount), as: UTF8.self)
        #expect(text == OptionName.allCases.map { $0.rawValue + "\0" }.joined())
        for option in OptionName.allCases {
            #expect(OptionName.named(Substring(option.rawValue))! == (option, true))
            // Both read a case's place from the case (OptionName.declared): each case finds its own name.
            #expect(String(decoding: option.nameBytes, as: UTF8.self) == option.rawValue)
        }
        #expect(OptionName.named("rol")! == (.role, false))
        #expect(OptionName.named("r") == nil)  // role, rssi-min, rssi-max
        #expect(OptionName.named("") == nil)
        #expect(OptionName.named("roles") == nil)
    }
}
