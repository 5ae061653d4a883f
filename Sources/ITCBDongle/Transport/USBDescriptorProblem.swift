import CLibUSB
import CLinux
import BLEHost
import Chipsets

/// Why a configuration descriptor gave no controller endpoints, in words
/// (BuiltText: one outlined call per piece; run once, at a failed open), for the open's line.
func describing(_ error: USBDescriptorError) -> BuiltText {
    switch error {
    case .notAConfiguration:
        return "what the device sent is not a configuration descriptor"
    case .truncated(let total, let read):
        return "it announces \(total) bytes (wTotalLength) but \(read) came"
    case .badDescriptor(let offset):
        return "a descriptor at byte \(offset) has an impossible length"
    case .shortDescriptor(let offset):
        return "the interface or endpoint descriptor at byte \(offset) is too short"
    case .noInterfaceZero:
        return "it has no interface 0 (alternate setting 0)"
    case .missingEndpoints(let interruptIn, let bulkIn, let bulkOut):
        var text: BuiltText = "interface 0 lacks the "
        var separator: StaticString = ""
        if !interruptIn { text.append("interrupt IN"); separator = ", " }
        if !bulkIn { text.append("\(separator)bulk IN"); separator = ", " }
        if !bulkOut { text.append("\(separator)bulk OUT") }
        text.append(" endpoint(s) of a Bluetooth controller")
        return text
    }
}
