/// Why a configuration descriptor gives no controller endpoints.
public enum USBDescriptorError: Error, Equatable {
    /// Fewer than 9 bytes, or not a configuration descriptor (bDescriptorType 2).
    case notAConfiguration
    /// wTotalLength is more than the bytes read, or less than the header.
    case truncated(totalLength: Int, read: Int)
    /// A descriptor whose bLength is below 2 or runs past wTotalLength (at this offset).
    case badDescriptor(offset: Int)
    /// An interface or endpoint descriptor shorter than its fixed part.
    case shortDescriptor(offset: Int)
    /// No interface 0, alternate setting 0.
    case noInterfaceZero
    /// Interface 0 lacks one of the three endpoints (what it has, as flags).
    case missingEndpoints(interruptIn: Bool, bulkIn: Bool, bulkOut: Bool)
}
