import CLibUSB
import CLinux
import BLEHost
import Chipsets

/// Why a configuration descriptor gave no controller endpoints, in words.
func describe(_ error: USBDescriptorError) -> String {
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
        var missing: [String] = []
        if !interruptIn { missing.append("interrupt IN") }
        if !bulkIn { missing.append("bulk IN") }
        if !bulkOut { missing.append("bulk OUT") }
        return "interface 0 lacks the \(missing.joined(separator: ", ")) endpoint(s) of a Bluetooth controller"
    }
}
