import BLEHost

struct Recognise: ChipsetQuestion {
    let version: LocalVersion
    let context: ChipsetContext
    func ask<D: ChipsetDriver>(_ chipset: D.Type) -> Bool {
        (context.probeEveryChipset || D.info.quirks.probedOnEveryUART) && D.recognises(version, context: context)
    }
}
