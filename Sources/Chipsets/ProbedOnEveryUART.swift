import BLEHost

struct ProbedOnEveryUART: ChipsetQuestion {
    func ask<C: Chipset>(_ chipset: C.Type) -> Bool { C.info.quirks.probedOnEveryUART }
}
