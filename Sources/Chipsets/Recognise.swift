import BLEHost

struct Recognise: ChipsetQuestion {
    let version: LocalVersion
    let context: ChipsetContext
    func ask<C: Chipset>(_ chipset: C.Type) -> Bool {
        (context.probeEveryChipset || C.info.quirks.probedOnEveryUART) && C.recognises(version, context: context)
    }
}
