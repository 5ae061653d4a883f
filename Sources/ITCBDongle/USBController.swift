import CLibUSB

/// USB transport (issue 4): placeholder until the libusb transport lands.
enum USBController {
    static func list() -> Int32 {
        Log.error("USB controller listing is not available yet")
        return Exit.transport
    }

    static func open(_ spec: TransportSpec, reset: Bool) throws(TransportError) -> Transport {
        throw .unavailable("the USB transport is not available yet; use --transport tcp:HOST:PORT or serial:PATH")
    }
}
