/// The procedure a link's client runs; one request outstanding per bearer (Vol 3 Part F §3.3.2).
enum GATTProcedure: Equatable {
    case idle, exchangeMTU, discoverService, discoverCharacteristics, discoverDescriptors
    case write, prepareWrite, executeWrite, read
    /// Execute Write with flags 0 after a failed long write; the error is reported when it completes.
    case cancelWrite
}
