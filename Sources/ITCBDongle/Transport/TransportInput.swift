import CLinux
import Chipsets

/// What a transport hands the driver: whole packets (USB: each from its
/// transfer's own buffer) or H4 bytes for the driver to de-frame (UART, TCP).
enum TransportInput {
    case packet(type: UInt8, UnsafeRawBufferPointer)
    case stream(UnsafeRawBufferPointer)
}
