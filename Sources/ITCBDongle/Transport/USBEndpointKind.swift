import BLEHost
import CLibUSB
import CLinux
import Chipsets

/// Endpoint kinds by descriptor (USB 2.0 §9.6.6): bmAttributes bits 1..0, direction bit 7.
enum USBEndpointKind: Equatable {
    case interruptIn, bulkIn, bulkOut, other

    init(attributes: UInt8, address: UInt8) {
        let isIn = address & 0x80 != 0
        switch (attributes & 0x03, isIn) {
        case (0x03, true): self = .interruptIn
        case (0x02, true): self = .bulkIn
        case (0x02, false): self = .bulkOut
        default: self = .other
        }
    }
}
