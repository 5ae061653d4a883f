import BLEHost
import EightBall
import CLinux

/// --controller-info: bring the controller up, print what it says, stop.
struct InfoLogic: RoleLogic {
    var exitCode: Int32? = nil
    mutating func poll(host: inout Host, now: UInt64) {}

    mutating func handle(_ event: HostEvent, host: inout Host, now: UInt64) {
        guard case .ready = event, exitCode == nil else { return }
        // A line at a time (writeLine escapes a newline inside a line), cut
        // where the built bytes lie: no String per line.
        controllerInfoBytes(host.controller).bytes.withUnsafeBytes { text in
            var start = 0
            for end in 0...text.count where end == text.count || text[end] == 0x0A {
                if start < end { writeLine(1, nil, UnsafeRawBufferPointer(rebasing: text[start..<end])) }
                start = end + 1
            }
        }
        exitCode = Exit.success
    }
}


@inline(never)
func controllerInfoBytes(_ info: ControllerInfo) -> BuiltText {
    // Built as bytes in one builder (String appends are inlined at every use),
    // begun with the literal's bytes (no second buffer to copy them from).
    var text = BuiltText.Builder(beginning: """
    HCI version:    \(coreVersionName(info.hciVersion)) (revision 0x\(hex: info.hciRevision))
    LMP version:    \(coreVersionName(info.lmpVersion)) (subversion 0x\(hex: info.lmpSubversion))
    Manufacturer:   \(companyName(info.manufacturer))
    Public address: \(info.publicAddress)\(info.publicAddress.isZero ? " (none)" : "")
    Address in use: \(info.address) (\(info.address.typeName))
    ACL buffers:    \(info.aclDataLength) bytes x \(info.aclPackets) (\(info.leBuffers ? "LE" : "shared BR/EDR"))
    LE features:    0x\(hex: info.leFeatures)\(info.leFeatures == 0 ? " (none)" : "")
    """)
    // `leFeatureList`'s names, each appended as it is found (no array of Strings):
    // the one name two bits share (33 and 34) comes in a row, and is shown once.
    var last: String? = nil
    for bit in 0..<64 where info.leFeatures & (1 << UInt64(bit)) != 0 {
        let name = leFeatureNames(bit)
        if let name, let last, sameBytes(name, last) { continue }
        text.appendLiteral("\n                ")
        if let name { text.appendInterpolation(name) } else { text.appendLiteral("bit "); text.appendInterpolation(bit) }
        last = name
    }
    if let chipset = ChipsetReport.line {
        text.appendLiteral("\nChipset:        ")
        text.appendInterpolation(chipset)
    }
    return BuiltText(text)
}

extension BuiltText.Builder {
    /// A builder that goes on from `text` (its bytes taken, not copied).
    init(beginning text: consuming BuiltText) { bytes = text.bytes }
}

/// "002a": four lower-case hex digits (a small String: no allocation).
@inline(never)
func hex4(_ value: UInt16) -> String {
    let digits: StaticString = "0123456789abcdef"
    var text: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
    return withUnsafeMutableBytes(of: &text) { out in
        for i in 0..<4 { out[i] = digits.utf8Start[Int((value >> UInt16(12 - 4 * i)) & 0xF)] }
        return String(repairingUTF8: UnsafeRawBufferPointer(out))
    }
}
