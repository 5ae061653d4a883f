import CLibUSB
import CLinux
import BLEHost
import Chipsets

/// Why a configuration descriptor gave no controller endpoints, in words, for
/// the open's line: appended to it (one outlined call per piece; run once, at a failed open).
func describing(_ error: USBDescriptorError, into text: inout BuiltText.Builder) {
    switch error {
    case .notAConfiguration:
        text.appendLiteral("what the device sent is not a configuration descriptor")
    case .truncated(let total, let read):
        text.appendLiteral("it announces ")
        text.appendInterpolation(total)
        text.appendLiteral(" bytes (wTotalLength) but ")
        text.appendInterpolation(read)
        text.appendLiteral(" came")
    case .badDescriptor(let offset):
        text.appendLiteral("a descriptor at byte ")
        text.appendInterpolation(offset)
        text.appendLiteral(" has an impossible length")
    case .shortDescriptor(let offset):
        text.appendLiteral("the interface or endpoint descriptor at byte ")
        text.appendInterpolation(offset)
        text.appendLiteral(" is too short")
    case .noInterfaceZero:
        text.appendLiteral("it has no interface 0 (alternate setting 0)")
    case .missingEndpoints(let interruptIn, let bulkIn, let bulkOut):
        text.appendLiteral("interface 0 lacks the ")
        var separator: StaticString = ""
        if !interruptIn { text.appendLiteral("interrupt IN"); separator = ", " }
        if !bulkIn { text.appendInterpolation(separator); text.appendLiteral("bulk IN"); separator = ", " }
        if !bulkOut { text.appendInterpolation(separator); text.appendLiteral("bulk OUT") }
        text.appendLiteral(" endpoint(s) of a Bluetooth controller")
    }
}

/// The words alone (the unit tests').
func describing(_ error: USBDescriptorError) -> BuiltText {
    var text = BuiltText.Builder()
    describing(error, into: &text)
    return BuiltText(text)
}
