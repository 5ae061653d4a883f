import BLEHost

extension ITCBDongle {
    func runCentral(configuration: HostConfiguration, transport: Transport, snoop: BTSnoopWriter?) -> Int32 {
        Log.error("the central role is not available yet")
        return Exit.failure
    }

    func printControllerInfo(configuration: HostConfiguration, transport: Transport, snoop: BTSnoopWriter?) -> Int32 {
        Log.error("--controller-info is not available yet")
        return Exit.failure
    }
}
