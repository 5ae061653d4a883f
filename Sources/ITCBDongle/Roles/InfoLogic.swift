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
    // Built as bytes (BuiltText): String appends are inlined at every use.
    let features = leFeatureList(info.leFeatures)
    var text: BuiltText = """
    HCI version:    \(coreVersionName(info.hciVersion)) (revision 0x\(hex: info.hciRevision))
    LMP version:    \(coreVersionName(info.lmpVersion)) (subversion 0x\(hex: info.lmpSubversion))
    Manufacturer:   \(companyName(info.manufacturer))
    Public address: \(info.publicAddress)\(info.publicAddress.isZero ? " (none)" : "")
    Address in use: \(info.address) (\(info.address.typeName))
    ACL buffers:    \(info.aclDataLength) bytes x \(info.aclPackets) (\(info.leBuffers ? "LE" : "shared BR/EDR"))
    LE features:    0x\(hex: info.leFeatures)\(features.isEmpty ? " (none)" : "")
    """
    for feature in features { text.append("\n                \(feature)") }
    if let chipset = ChipsetReport.line { text.append("\nChipset:        \(chipset)") }
    return text
}

/// "002a": four lower-case hex digits (a small String: no allocation).
@inline(never)
func hex4(_ value: UInt16) -> String {
    let digits: StaticString = "0123456789abcdef"
    var text: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
    return withUnsafeMutableBytes(of: &text) { out in
        for i in 0..<4 { out[i] = digits.utf8Start[Int((value >> UInt16(12 - 4 * i)) & 0xF)] }
        return String(decoding: UnsafeRawBufferPointer(out), as: UTF8.self)
    }
}
