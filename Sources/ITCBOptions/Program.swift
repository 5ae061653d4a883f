public enum Program {
    public static let name = "itcb-dongle"
    public static let abstract = "A Magic 8-Ball BLE appliance on a USB Bluetooth dongle (or any H4 controller)."
    /// Lines of one StaticString (`usage`, `examples`: the same as arrays): an
    /// array of Strings is start-up code, a StaticString constant data (2026-11-28).
    public static let usageLines: StaticString = """
        itcb-dongle --role peripheral [--name <name>] [--transport <transport>] [<options>]
        itcb-dongle --role central [--question <question> ...] [--transport <transport>] [<options>]
        itcb-dongle --role central --scan [--timeout <seconds>] [--json]
        itcb-dongle --list-controllers | --controller-info [--transport <transport>]
        """
    public static var usage: [String] { lines(usageLines) }
    // One literal each (a line ending in \ continues it): "…" + "…" is joined at run time.
    public static let description = """
        Peripheral: advertises the 8-Ball service and answers questions written to it. \
        Central: finds 8-Balls in range, asks questions, prints the answers.
        """
    public static let exitCodes = """
        0 success, 1 internal error, 2 bad command line or environment (bad value, \
        unwritable --btsnoop file, no questions on standard input), 3 transport error, \
        4 controller not responding, 5 question rejected (central), 6 no 8-Ball found (central), \
        7 timeout / device offline (central), 8 dongle unplugged (--exit-on-unplug), \
        130 central stopped by Ctrl-C (143: SIGTERM).
        """
    /// What --transport takes (TransportSpec.parse in Sources/ITCBDongle reads it).
    public static let transports = "usb | usb:VID:PID | usb:BUS-PORT[.PORT…] | tcp:HOST:PORT | serial:PATH[@BAUD][,flow|,noflow]"
    public static let exampleLines: StaticString = """
        itcb-dongle --role peripheral --transport tcp:127.0.0.1:9001 --name Kiosk
        itcb-dongle --role central --transport tcp:127.0.0.1:9002 --question "Rain?"
        itcb-dongle --role central --scan
        """
    public static var examples: [String] { lines(exampleLines) }

    static func lines(_ text: StaticString) -> [String] { string(text).split(ascii: "\n").map(String.init) }
}

/// A StaticString's text as a String.
func string(_ text: StaticString) -> String {
    String(repairingUTF8: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
}
