import Testing
import BLEHost
@testable import Chipsets

// The table is one line per chipset (`ChipsetTable`): its count and its
// dispatch come from that line, and they must agree entry by entry.

@Suite struct ChipsetTableTests {
    /// Each entry's vendor, by the table's dispatch: `ask` and `visit` reach the
    /// same chipset at every index, nothing past `count`.
    @Test func countAndDispatchAgree() {
        struct Vendor: ChipsetVisitor {
            mutating func visit<C: Chipset>(_ chipset: inout C) -> String { "\(C.info.vendor)" }
        }
        var table = ChipsetTable()
        var vendors: [String] = []
        var visitor = Vendor()
        for index in 0..<ChipsetTable.count {
            let info = ChipsetTable.info(index)
            let visited = table.visit(index, &visitor)
            #expect(info != nil && visited == info.map { "\($0.vendor)" })
            vendors.append(visited ?? "")
        }
        #expect(ChipsetTable.info(ChipsetTable.count) == nil && table.visit(ChipsetTable.count, &visitor) == nil)
        #expect(vendors == ["Realtek", "Intel", "Broadcom", "MediaTek"])  // the probe's order
        #expect(Set(vendors).count == ChipsetTable.count)
    }

    /// Every chipset's firmware folder, as `--firmware-dir`'s help names them.
    @Test func everyEntryHasItsOwnFirmwareFolder() {
        let folders = (0..<ChipsetTable.count).compactMap { ChipsetTable.info($0).map { "\($0.directory)" } }
        #expect(folders == ["rtl_bt", "intel", "brcm", "mediatek"] && Set(folders).count == folders.count)
    }
}
