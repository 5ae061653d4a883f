public enum Program {
    public static let name = "itcb-dongle"
    public static let abstract = "A Magic 8-Ball BLE appliance on a USB Bluetooth dongle (or any H4 controller)."
    public static let usage = [
        "itcb-dongle --role peripheral [--name <name>] [--transport <transport>] [<options>]",
        "itcb-dongle --role central [--question <question> ...] [--transport <transport>] [<options>]",
        "itcb-dongle --role central --scan [--timeout <seconds>] [--json]",
        "itcb-dongle --list-controllers | --controller-info [--transport <transport>]",
    ]
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
    public static let examples = [
        "itcb-dongle --role peripheral --transport tcp:127.0.0.1:9001 --name Kiosk",
        "itcb-dongle --role central --transport tcp:127.0.0.1:9002 --question \"Rain?\"",
        "itcb-dongle --role central --scan",
    ]
}
