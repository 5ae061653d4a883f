/// GAP central state (filled in with the central role).
struct ScanState {
    var enabled = false
    var connecting = false
    var deadline: UInt64? = nil
    mutating func resetForRecovery() { self = ScanState() }
}

extension Host {
    mutating func tickCentral() {}
    mutating func centralReady() {}
    mutating func centralConnectionCompleted(status: UInt8) {}
    mutating func centralConnectionClosed(_ handle: UInt16) {}
    mutating func createConnectionFailed(_ status: UInt8) {}
    mutating func scanEnableCompleted(_ status: UInt8, _ enabled: Bool) {}
    mutating func queueScanEnable(_ enable: Bool) {}
    mutating func handleAdvertisingReports(_ reader: inout ByteReader, extended: Bool) {}
}
