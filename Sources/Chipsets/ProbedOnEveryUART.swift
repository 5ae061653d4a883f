import BLEHost

struct ProbedOnEveryUART: ChipsetQuestion {
    func ask<D: ChipsetDriver>(_ chipset: D.Type) -> Bool { D.info.quirks.probedOnEveryUART }
}
