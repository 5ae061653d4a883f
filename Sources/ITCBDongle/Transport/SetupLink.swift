import Chipsets

/// What a chipset's set-up needs of the link besides H4: the facts it chooses
/// by (USB IDs, UART rates) and the link following what the set-up asks
/// (`SetupWishes`). The run loop asks a transport for it
/// (`Transport.setupLink`); over TCP there is none: the set-up's commands go
/// as they are.
protocol SetupLink: AnyObject {
    /// What the chipsets see of this link (USB IDs, UART rates).
    func chipsetFacts(into context: inout ChipsetContext)
    /// The chipset's set-up speaks USB vendor control requests
    /// (`USBVendorControl`): told once, before its first command.
    func useVendorControl(_ on: Bool)
    /// The set-up asks something else of the link from now on: called when
    /// the wishes change, never per pass, always before the next packet is sent.
    func follow(_ wishes: SetupWishes)
}
