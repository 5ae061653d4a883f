"""One of several emulated dongles in one guest (a fleet of four),
made with configfs + FunctionFS on one of dummy_hcd's controllers.

GadgetFS, which gadget_dongle.py uses, serves one gadget per kernel (its
mount is a singleton bound to the first UDC), so four dongles at once take
FunctionFS: `modprobe dummy_hcd num=4` makes four UDC/host-controller pairs
(dummy_udc.0-3, USB buses 1-4), and each dongle is a configfs gadget
(itcbN) with one FunctionFS function bound to dummy_udc.N-1, so it shows up
as N-1 on the host side (bus N, root port 1). The function's descriptors ask
for every control request (FUNCTIONFS_ALL_CTRL_RECIP), so HCI commands —
class requests to the device, bmRequestType 0x20 — reach it as they reach
gadget_dongle.py.

What the host sees is the same CSR8510-like dongle as gadget_dongle.py's
(0a12:0001, full speed, device and interface class E0/01/01, one interrupt IN
and two bulk endpoints, 16/64-byte packets), with its own serial number
(ITCB000N) and its own controller (the virtio port named by the caller). The
endpoint addresses are the ones dummy_udc's autoconfiguration hands out
(FunctionFS numbers them itself): the program finds them by walking the
descriptors, as it does on real dongles. Everything after the descriptors —
the H4 bridge, controller order across the IN endpoints, zero-length
packets, the logs — is gadget_dongle.py's (imported).

Vendor personalities (--personality CHIP, as gadget_dongle.py's): the chip's
VID:PID and class, HCI commands to the personality first, MediaTek's vendor
requests (register reads and writes, the WMT answer read through control IN)
answered from it. FunctionFS is what carries a MediaTek download: its EP0 OUT
data stage waits for this program's read (GadgetFS's completes before, and
refuses more than 256 bytes: a 250-byte WMT chunk is a 258-byte command). Each
plug-in (SIGUSR2, and the start) powers the chip on afresh.

Signals: SIGUSR1 unplugs (the gadget is unbound from its UDC: the host sees a
disconnect, and the controller's radio goes quiet as a powered-off one would:
see power_off), SIGUSR2 plugs in again, SIGTERM unplugs and exits.

Usage: python3 ffs_dongle.py [--trace] [--personality CHIP --firmware-dir DIR [--mtk-warm] [--mtk-present 1,2]]
                             INDEX SERIAL_DEVICE    (INDEX 1-4)
"""
import argparse
import errno
import os
import signal
import struct
import threading
import time

import gadget_dongle as g

CONFIGFS = "/sys/kernel/config/usb_gadget"
# FunctionFS (linux/usb/functionfs.h): v2 descriptor and string blobs, ep0 events.
DESCRIPTORS_MAGIC_V2, STRINGS_MAGIC = 3, 2
HAS_FS_DESC, ALL_CTRL_RECIP = 1, 64
BIND, UNBIND, ENABLE, DISABLE, SETUP, SUSPEND, RESUME = range(7)
EVENT_SIZE = 12  # struct usb_functionfs_event: 8-byte setup, type, 3 pad bytes
# gadget_dongle's endpoint names → FunctionFS's files, numbered in descriptor order.
EP_FILES = {"ep1in-bulk": "ep1", "ep2in-bulk": "ep2", "ep2out-bulk": "ep3"}


def function_descriptors():
    interface = struct.pack("<9B", 9, 4, 0, 0, 3, *g.usb_class(), 0)
    endpoints = [full for _, full, _ in g.endpoint_descriptors(False).values()]  # 0x81 int, 0x82 bulk, 0x02 bulk
    body = interface + b"".join(endpoints)
    return struct.pack("<IIII", DESCRIPTORS_MAGIC_V2, 16 + len(body), HAS_FS_DESC | ALL_CTRL_RECIP,
                       1 + len(endpoints)) + body


def write(path, value):
    with open(path, "w") as f:
        f.write(value)


def make_gadget(index):
    """The configfs gadget itcbN with function ffs.itcbN, FunctionFS mounted at /dev/ffs-itcbN."""
    root = os.path.join(CONFIGFS, f"itcb{index}")
    os.makedirs(os.path.join(root, "strings", "0x409"), exist_ok=True)
    klass = g.usb_class()
    for name, value in (("idVendor", f"0x{g.options.vid:04x}"), ("idProduct", f"0x{g.options.pid:04x}"),
                        ("bcdDevice", "0x8891"), ("bcdUSB", "0x0200"), ("bDeviceClass", f"0x{klass[0]:02x}"),
                        ("bDeviceSubClass", f"0x{klass[1]:02x}"), ("bDeviceProtocol", f"0x{klass[2]:02x}")):
        write(os.path.join(root, name), value)
    if os.path.exists(os.path.join(root, "max_speed")):
        write(os.path.join(root, "max_speed"), "full-speed")
    for name, value in zip(("manufacturer", "product", "serialnumber"),
                           (g.STRINGS[1], g.STRINGS[2], f"ITCB{index:04d}")):
        write(os.path.join(root, "strings", "0x409", name), value)
    config = os.path.join(root, "configs", "c.1")
    os.makedirs(config, exist_ok=True)
    write(os.path.join(config, "MaxPower"), "100")
    write(os.path.join(config, "bmAttributes"), "0xc0")
    function = os.path.join(root, "functions", f"ffs.itcb{index}")
    os.makedirs(function, exist_ok=True)
    if not os.path.lexists(os.path.join(config, f"ffs.itcb{index}")):
        os.symlink(function, os.path.join(config, f"ffs.itcb{index}"))
    mount = f"/dev/ffs-itcb{index}"
    os.makedirs(mount, exist_ok=True)
    with open("/proc/mounts") as f:
        mounted = any(line.split()[1] == mount for line in f)
    if not mounted and os.system(f"mount -t functionfs itcb{index} {mount}") != 0:
        raise RuntimeError(f"cannot mount functionfs at {mount}")
    return root, mount


class FfsConfiguration(g.Configuration):
    """gadget_dongle's configured state on FunctionFS endpoint files. O_NONBLOCK
    only stops I/O from waiting for a disabled endpoint (it fails at once, so a
    configuration's threads end when it is closed); enabled, it blocks as usual."""

    # An event of 16 bytes (a whole interrupt packet) is followed by a zero-length
    # packet here: without it Linux's btusb, bound to an emulated MediaTek chip, never
    # took the 16-byte answer to Read Local Extended Features (6.1 and 6.12 alike:
    # "Opcode 0x1004 failed: -110", then btusb_mtk_reset's resets, over and over),
    # and its set-up after the RAM code never ended. Our transport's interrupt
    # transfers are one packet long: a zero-length one carries nothing.
    event_zero_length_packets = True

    def _open(self, name, descriptors):
        return os.open(os.path.join(self.dongle.ffs, EP_FILES[name]), os.O_RDWR | os.O_NONBLOCK)


class FfsDongle(g.Dongle):
    def __init__(self, index, serial):
        self.index = index
        self.root, self.ffs = make_gadget(index)
        self.udc = f"dummy_udc.{index - 1}"
        self.link = g.ControllerLink(serial)
        self.configuration = None
        self.speed = 2
        self.lock = threading.Lock()
        self.largest = {}
        self.personality_lock = threading.Lock()
        self.power_on()
        self.handles = set()  # the controller's connections (power_off ends them)
        self.control = os.open(os.path.join(self.ffs, "ep0"), os.O_RDWR)
        os.write(self.control, function_descriptors())
        os.write(self.control, struct.pack("<IIII", STRINGS_MAGIC, 16, 0, 0))
        threading.Thread(target=self.controller_loop, daemon=True).start()

    def controller_loop(self):
        """gadget_dongle's, noting which connections the controller has (for power_off)."""
        lost = 0
        for kind, packet in g.h4_packets(self.link):
            if kind == 0x04 and len(packet) >= 6:
                if packet[0] == 0x3E and packet[2] in (0x01, 0x0A, 0x29) and packet[3] == 0:  # LE connection complete
                    self.handles.add(struct.unpack_from("<H", packet, 4)[0] & 0x0FFF)
                elif packet[0] == 0x05 and packet[2] == 0:  # Disconnection Complete
                    self.handles.discard(struct.unpack_from("<H", packet, 3)[0] & 0x0FFF)
            with self.lock:
                configuration = self.configuration
            if kind not in (0x02, 0x04):
                g.log(f"controller sent an H4 packet of type 0x{kind:02x}; no endpoint carries it, dropped")
            elif configuration is None:
                lost += 1
                if lost in (1, 10, 100) or lost % 1000 == 0:
                    g.log(f"{lost} packet(s) from the controller dropped: the device is not configured")
            else:
                configuration.deliver(kind, packet)

    def power_off(self):
        """A pulled dongle's radio goes quiet: its peers lose their links (a supervision
        timeout on a real radio) and its advertising stops. The Bumble controller
        behind it would go on doing both for a host that is gone, so it is told to
        stop: advertising off (legacy and extended) and each connection ended
        (0x15: remote device powered off). Its replies are dropped (unplugged)."""
        commands = [struct.pack("<HBB", 0x200A, 1, 0), struct.pack("<HBBB", 0x2039, 2, 0, 0)]
        commands += [struct.pack("<HBHB", 0x0406, 3, handle, 0x15) for handle in sorted(self.handles)]
        for command in commands:
            self.link.send(b"\x01" + command, "HCI command 0x%04x" % struct.unpack_from("<H", command)[0])
        g.log(f"radio off: advertising stopped, {len(commands) - 2} connection(s) ended")

    def configure(self):
        self.deconfigure("new configuration")
        configuration = FfsConfiguration(self, self.speed)
        with self.lock:
            self.configuration = configuration

    def plug(self, wanted, first=False):
        """Binds the gadget to its UDC (plugged in) or unbinds it (unplugged)."""
        try:
            if wanted and self.personality is not None and not first:
                with self.personality_lock:
                    self.power_on()  # a plug-in after an unplug is a power cycle
            write(os.path.join(self.root, "UDC"), self.udc if wanted else "\n")
            if not wanted:
                self.power_off()
            g.log(f"{'plugged in' if wanted else 'unplugged'} (dongle {self.index}, {self.udc}, serial ITCB{self.index:04d})")
        except OSError as error:
            g.log(f"{'plug' if wanted else 'unplug'} failed: {error}")

    def setup(self, request_type, request, value, index, length):
        # Standard requests are the composite framework's; HCI commands come here.
        if request_type in (0x20, 0x21) and request == 0 and length >= 3:
            data = self.data_stage(length)
            if data is None:
                return
            g.trace(f"command: {data.hex()}")
            problem = g.command_problem(data, length)
            if problem is not None:  # never forwarded: it would throw the H4 stream out of step
                g.log(f"ep0: HCI command data {data[:12].hex()} is not one command ({problem}); dropped")
                return
            self.command(data)
        elif hasattr(self.personality, "read_register") and self.vendor_request(request_type, request, value, index,
                                                                                length):
            pass
        else:
            self.stall(request_type, request, value, index, length)

    def ep0_loop(self):
        while True:
            try:
                data = os.read(self.control, EVENT_SIZE * 4)
                # When the requests read here had come at the latest (vendor_request's gap
                # ends here, not after this thread has parsed and dispatched them).
                self.requests_read_at = time.monotonic()
            except OSError as error:
                if error.errno in (errno.EINTR, errno.EAGAIN):
                    continue
                g.log(f"ep0: read failed ({os.strerror(error.errno)})")
                time.sleep(0.1)
                continue
            for offset in range(0, len(data) - EVENT_SIZE + 1, EVENT_SIZE):
                event = data[offset:offset + EVENT_SIZE]
                kind = event[8]
                g.trace(f"ep0 event {kind} {event[:8].hex()}")
                if kind == ENABLE:
                    self.configure()
                elif kind in (DISABLE, UNBIND):
                    if kind == DISABLE and hasattr(self.personality, "read_register"):
                        self.note_control("port reset")  # the order test_vendor.py checks (btusb_mtk_reset)
                    self.deconfigure("disconnect or reset by the host" if kind == DISABLE else "unbound")
                elif kind == BIND:
                    g.trace("bound")
                elif kind == SETUP:
                    request = struct.unpack_from("<BBHHH", event)
                    try:
                        self.setup(*request)
                    except OSError as error:
                        g.log(f"ep0: request {request} failed ({os.strerror(error.errno)})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trace", action="store_true", help="log every packet")
    parser.add_argument("--personality", help="a chip of personalities.CHIPS (e.g. mt7922)")
    parser.add_argument("--firmware-dir", help="the folder the personality checks the download against")
    parser.add_argument("--mtk-warm", action="store_true", help="MediaTek: the RAM code runs already")
    parser.add_argument("--mtk-present", help="MediaTek: these sections (e.g. 1,2) are there already; the others come")
    parser.add_argument("index", type=int, help="1-4: gadget itcbN on dummy_udc.N-1 (USB bus N)")
    parser.add_argument("serial", help="the virtio port of this dongle's controller")
    options = parser.parse_args()
    g.options = argparse.Namespace(trace=options.trace, high_speed=False, personality=options.personality,
                                   firmware_dir=options.firmware_dir, rom_version=None, mtk_warm=options.mtk_warm,
                                   mtk_fault=None, mtk_present=options.mtk_present, gadgetfs=None, serial=options.serial, usb_class=None,
                                   vid=0x0A12, pid=0x0001)
    if options.personality:
        import personalities
        chip = personalities.make(options.personality, options.firmware_dir)
        (g.options.vid, g.options.pid), g.options.usb_class = chip.usb_id, chip.usb_class
    dongle = FfsDongle(options.index, options.serial)

    def on_signal(number, _frame):
        # The UDC write waits for the gadget to unbind, which queues ep0 events: not from this thread.
        threading.Thread(target=dongle.plug, args=(number == signal.SIGUSR2,), daemon=True).start()
        if number == signal.SIGTERM:
            time.sleep(0.5)
            os._exit(0)

    for number in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM):
        signal.signal(number, on_signal)
    dongle.plug(True, first=True)
    dongle.ep0_loop()


if __name__ == "__main__":
    main()
