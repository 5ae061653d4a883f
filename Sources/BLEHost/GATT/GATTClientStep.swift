/// What the host does after a client entry point.
enum GATTClientStep {
    /// Nothing (a response that only updated the link).
    case none
    /// Send the request left in `request`; when it cannot be queued, report
    /// `otherwise` (nil: the transaction timeout ends the procedure).
    case send(otherwise: GATTClientEvent?)
    /// The procedure ended.
    case finished(GATTClientEvent)
    /// A response that does not answer the outstanding request.
    case unexpected(opcode: UInt8)
}
