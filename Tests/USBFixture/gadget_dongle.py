"""A USB Bluetooth dongle in the guest, made with GadgetFS on dummy_hcd and
bridged to a Bumble virtual controller over H4 on a virtio serial port.

The device looks like a CSR8510 A10 class dongle (0a12:0001, full speed):
device class E0/01/01 and one interface E0/01/01 with interrupt IN 0x81
(events, 16-byte packets), bulk IN 0x82 and bulk OUT 0x02 (ACL, 64-byte
packets). Core Spec Vol 4 Part B mapping:

  EP0 class request (bmRequestType 0x20) → H4 command (0x01) to the controller
  bulk OUT 0x02                          → H4 ACL (0x02), cut by ACL headers
  H4 event (0x04)                        → interrupt IN 0x81 (one transfer per
                                           event: 16-byte packets, short last one)
  H4 ACL (0x02)                          → bulk IN 0x82 (one transfer per packet,
                                           a zero-length packet after a transfer
                                           that is a multiple of 64 bytes)

Control requests it does not serve are stalled (IN: wrong-direction read; OUT:
wrong-direction write). String descriptors are served (manufacturer, product,
serial). A port reset or re-enumeration by the host closes the endpoints and
SET_CONFIGURATION opens them again. The virtio serial link may go away and come
back (QEMU reconnects to Bumble): packets are dropped meanwhile, never a crash.

Signals to the supervisor (its pid is what the caller records):
  SIGUSR1  unplug: the process serving the plug-in is killed, its GadgetFS files
           close and the host sees the device disappear (a real unplug);
  SIGUSR2  plug in again;  SIGTERM  unplug and exit.

Log lines (stdout) name every plug, configuration, stall and anomaly, e.g.
"acl-out: 128-byte packet ended by a zero-length packet".

Vendor personalities (--personality CHIP, from personalities.py next to this
file): the dongle presents the chip's VID:PID and class (a BCM20702's is vendor
class FF/01/01 on the device and interface 0) and every HCI command (EP0, and
bulk OUT while the chip takes commands there: an Intel bootloader's Secure
Send) goes to the personality first; its replies go out on interrupt IN (or
bulk IN), a command it does not answer goes to the Bumble controller. Each
plug-in is a new personality: an unplug is a power cycle (a patch is lost), a
port reset is not. Every command is appended to vendor-commands.hex (hex, then
" bulk" when it came on bulk OUT), the personality's protocol errors to
vendor-errors.txt (both next to this file).

Faults, each asked for by a file next to this file:
  stall-0x81, stall-0x82  halt that IN endpoint once, before its next packet (the
                          host must clear the halt; the packet then goes out);
  stall-0x02              halt bulk OUT once, after the next packet read from it
                          (the host's next bulk OUT transfer gets a STALL
                          handshake and must be sent again after the clear);
  babble-0x81             with --babble: before the next event, one 20-byte
                          transfer on interrupt IN where the host asks for 16 (the
                          host controller reports babble, -EOVERFLOW); the event
                          then goes out as usual;
  swallow-commands        while it exists, HCI commands are taken from the bus
                          and dropped: the controller stops answering commands
                          (events and ACL still flow).
  silent-until-port-reset    the same until the host resets the port (the file
                             is removed then): a wedged dongle a port reset cures;
  silent-until-reenumerated  the same until the host resets the port, which makes
                             the dongle leave the bus and enumerate again a second
                             later as a new device (the plug-in process ends and the
                             supervisor plugs in a new one): a dongle that needs a
                             full re-enumeration.
  wedged-until-chip-reset    MediaTek: at the next HCI command the file is removed
                             and the chip wedges (personalities.MediaTek.wedge): it
                             drops every HCI command until the host runs Linux's
                             subsystem reset through its register requests; a port
                             reset does not help.

Usage: python3 gadget_dongle.py [--id VID:PID] [--personality CHIP [--firmware-dir DIR] [--rom-version N]]
                                [--high-speed] [--trace] [--malformed-descriptor] [--babble]
                                GADGETFS_DIR SERIAL_DEVICE
"""
import argparse
import collections
import errno
import os
import queue
import select
import signal
import struct
import sys
import threading
import time

# GadgetFS event types (linux/usb/gadgetfs.h) and USB speeds (linux/usb/ch9.h).
NOP, CONNECT, DISCONNECT, SETUP, SUSPEND = range(5)
SPEEDS = {1: "low", 2: "full", 3: "high", 5: "super"}
EVENT_MAX_PACKET = 16
STRINGS = {1: "ITCB test fixture", 2: "Emulated Bluetooth dongle", 3: "ITCB0001"}

options = None
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # personalities.py (run-guest.sh copies it next to this file)


class FlagFiles:
    """The flag files tests create in the work folder (stall-0x81, swallow-commands, …),
    seen through one listing of the folder at most every PERIOD seconds. Each stat
    over 9p is a round trip to the host (1 to 3.7 ms in the TCG guest, measured
    2026-11-28), and the data path asked for four or five a Secure Send; an A/B
    run under equal load found the listing about 5% faster on an Intel download
    (the guest is CPU-bound). A flag a test sets or removes takes effect within
    PERIOD; one the gadget takes (removes) is gone at once."""
    PERIOD = 0.05

    def __init__(self):
        self.lock = threading.Lock()
        self.names = frozenset()
        self.listed = -1.0

    def present(self, path):
        now = time.monotonic()
        with self.lock:
            if now - self.listed >= self.PERIOD:
                try:
                    self.names = frozenset(os.listdir(HERE))
                except OSError:
                    self.names = frozenset()
                self.listed = now
            return os.path.basename(path) in self.names

    def take(self, path):
        """True when the flag was there and is now removed (the one-shot flags)."""
        return self.present(path) and self.drop(path)

    def drop(self, path):
        """Removes the flag if it is there, asking the folder itself (rare events: a port reset)."""
        with self.lock:
            self.names = self.names - {os.path.basename(path)}
        try:
            os.remove(path)
            return True
        except FileNotFoundError:
            return False


flags = FlagFiles()
log_lock = threading.Lock()


def log(*args):
    """One line, stamped with the time since boot (as in the kernel log)."""
    with log_lock:
        print("gadget: [%.3f]" % time.clock_gettime(time.CLOCK_BOOTTIME), *args, flush=True)


def trace(*args):
    if options.trace:
        log(*args)


# ---------------------------------------------------------------- descriptors

def endpoint_descriptor(address, attributes, max_packet, interval):
    return struct.pack("<BBBBHB", 7, 5, address, attributes, max_packet, interval)


def endpoint_descriptors(high_speed):
    """Per endpoint: its GadgetFS file on dummy_udc, full-speed and high-speed descriptors."""
    return {
        0x81: ("ep1in-bulk", endpoint_descriptor(0x81, 3, EVENT_MAX_PACKET, 1),
               endpoint_descriptor(0x81, 3, EVENT_MAX_PACKET, 4)),
        0x82: ("ep2in-bulk", endpoint_descriptor(0x82, 2, 64, 0), endpoint_descriptor(0x82, 2, 512, 0)),
        0x02: ("ep2out-bulk", endpoint_descriptor(0x02, 2, 64, 0), endpoint_descriptor(0x02, 2, 512, 0)),
    }


def usb_class():
    """Device and interface 0 class: Bluetooth, or the personality's (a BCM20702's FF/01/01)."""
    return getattr(options, "usb_class", None) or (0xE0, 0x01, 0x01)


def configuration_descriptor(high_speed):
    interface = struct.pack("<9B", 9, 4, 0, 0, 3, *usb_class(), 0)
    endpoints = [d[2 if high_speed else 1] for d in endpoint_descriptors(high_speed).values()]
    if options is not None and options.malformed_descriptor:
        # What the host is shown only (the endpoints stay as they are): the interrupt IN
        # endpoint's descriptor cut to 6 bytes. Linux skips it ("invalid endpoint
        # descriptor of length 6"), so btusb finds no event endpoint and does not bind.
        endpoints[0] = bytes([6]) + endpoints[0][1:6]
    body = interface + b"".join(endpoints)
    return struct.pack("<BBHBBBBB", 9, 2, 9 + len(body), 1, 1, 0, 0xC0, 50) + body


def device_descriptor(vid, pid):
    return struct.pack("<BBHBBBBHHHBBBB", 18, 1, 0x0200, *usb_class(), 64, vid, pid, 0x8891, 1, 2, 3, 1)


def string_descriptor(index):
    if index == 0:
        return b"\x04\x03\x09\x04"  # English (US)
    text = STRINGS.get(index)
    if text is None:
        return None
    data = text.encode("utf-16-le")
    return bytes([2 + len(data), 3]) + data


# ---------------------------------------------------------------- the controller side (virtio serial, H4)

class ControllerLink:
    """The H4 byte stream to the Bumble controller. Non-blocking: while QEMU's
    socket to Bumble is down, writes are dropped after a short wait and reads
    see a hang-up; when it comes back, traffic resumes."""

    def __init__(self, path):
        for _ in range(50):  # the previous plug-in's process may still hold the port for a moment
            try:
                self.fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
                break
            except OSError as error:
                if error.errno != errno.EBUSY:
                    raise
                trace(f"{path} busy")
                time.sleep(0.1)
        else:
            raise RuntimeError(f"{path} stays busy")
        self.lock = threading.Lock()
        self.up = True
        self.dropped = 0
        stale = 0
        try:  # what the controller sent while unplugged is gone, as on a real bus
            while True:
                chunk = os.read(self.fd, 4096)
                if not chunk:
                    break
                stale += len(chunk)
        except BlockingIOError:
            pass
        if stale:
            log(f"discarded {stale} stale bytes from the controller")

    def send(self, packet, what):
        with self.lock:
            deadline = time.time() + 2
            view = memoryview(packet)
            while view:
                try:
                    written = os.write(self.fd, view)
                    view = view[written:]
                    continue
                except BlockingIOError:
                    pass
                except OSError as error:
                    log(f"controller link: write failed ({error}); {what} dropped")
                    return False
                remaining = deadline - time.time()
                if remaining <= 0:
                    if len(view) != len(packet):
                        log(f"controller link: stalled in the middle of a {what}; the H4 stream is now out of step")
                    else:
                        log(f"controller link down: {what} dropped")
                    return False
                select.select([], [self.fd], [], min(remaining, 0.2))
            return True

    def read(self):
        """Blocks until bytes arrive; returns b"" when the link is down (hang-up)."""
        while True:
            ready, _, _ = select.select([self.fd], [], [], 1.0)
            if not ready:
                continue
            try:
                data = os.read(self.fd, 4096)
            except BlockingIOError:
                continue
            except OSError as error:
                log(f"controller link: read failed ({error})")
                time.sleep(0.2)
                return b""
            if data:
                if not self.up:
                    log("controller link is back")
                    self.up = True
                return data
            if self.up:
                log("controller link is down (QEMU lost its connection to the controller)")
                self.up = False
            time.sleep(0.2)
            return b""


def h4_packets(link):
    """Yields (type, packet without the H4 byte) from the controller; a link
    hang-up resets the stream (a partial packet is dropped)."""
    buffer = b""
    headers = {0x04: (2, lambda b: b[2]), 0x02: (4, lambda b: struct.unpack_from("<H", b, 3)[0]),
               0x03: (3, lambda b: b[3]), 0x05: (4, lambda b: struct.unpack_from("<H", b, 3)[0] & 0x3FFF)}
    while True:
        data = link.read()
        if not data:
            if buffer:
                log(f"dropped a partial {len(buffer)}-byte H4 packet at a link hang-up")
            buffer = b""
            continue
        buffer += data
        while buffer:
            kind = buffer[0]
            if kind not in headers:
                log(f"H4 stream out of step: skipping byte 0x{kind:02x}")
                buffer = buffer[1:]
                continue
            size, length_of = headers[kind]
            if len(buffer) < 1 + size:
                break
            end = 1 + size + length_of(buffer)
            if len(buffer) < end:
                break
            packet, buffer = buffer[1:end], buffer[end:]
            yield kind, packet


# ---------------------------------------------------------------- the USB side

class Configuration:
    """The endpoints of one configured state, from SET_CONFIGURATION to the next
    disconnect or reset. Each endpoint's file is closed by the thread using it,
    so no thread ever touches a file number that was reused."""
    event_zero_length_packets = False

    def __init__(self, dongle, speed):
        self.dongle = dongle
        self.alive = True
        self.high_speed = speed >= 3
        self.bulk_max_packet = 512 if self.high_speed else 64
        self.events = queue.Queue(maxsize=512)
        self.acl = queue.Queue(maxsize=512)
        # Controller order across the two IN endpoints (see _write_loop).
        self.order = threading.Condition()
        self.sequence = 0
        self.unfinished = {0x81: collections.deque(), 0x82: collections.deque()}
        self.stuck = None  # the IN endpoint the host stopped reading, if any
        self.files = {}
        for address, (name, full, high) in endpoint_descriptors(self.high_speed).items():
            if address == 0x81 and getattr(options, "babble", False):
                # The gadget's side of interrupt IN takes up to 64 bytes a packet while the host
                # is shown 16: a write longer than the host's 16-byte transfer is then babble to
                # dummy_hcd (-EOVERFLOW), as a device sending an over-long packet is to a real
                # host controller. Events go out 16 bytes a write, as the host expects.
                full = endpoint_descriptor(0x81, 3, 64, 1)
            self.files[address] = self._open(name, full + (high if options.high_speed else b""))
        threading.Thread(target=self._write_loop, args=(0x81, self.events, EVENT_MAX_PACKET, self.event_zero_length_packets),
                         daemon=True).start()
        threading.Thread(target=self._write_loop, args=(0x82, self.acl, self.bulk_max_packet, True),
                         daemon=True).start()
        threading.Thread(target=self._acl_out_loop, daemon=True).start()
        log(f"configured ({SPEEDS.get(speed, speed)} speed: interrupt IN 0x81 {EVENT_MAX_PACKET} bytes,"
            f" bulk 0x82/0x02 {self.bulk_max_packet} bytes)")

    def _open(self, name, descriptors):
        path = os.path.join(options.gadgetfs, name)
        deadline = time.time() + 3
        while True:  # the previous configuration's thread may still be closing its file
            try:
                fd = os.open(path, os.O_RDWR)
                break
            except OSError as error:
                if error.errno != errno.EBUSY or time.time() > deadline:
                    raise
                time.sleep(0.02)
        os.write(fd, struct.pack("<I", 1) + descriptors)
        return fd

    def close(self):
        self.alive = False

    def deliver(self, kind, packet, address=None):
        """A packet from the controller: events to interrupt IN, ACL to bulk IN;
        `address` 0x82 sends an event on bulk IN (an Intel bootloader's replies)."""
        if address is None:
            address = 0x81 if kind == 0x04 else 0x82
        target = self.events if address == 0x81 else self.acl
        with self.order:
            if target.full():
                log(f"{'event' if address == 0x81 else 'bulk-in'}: the host does not read; packet dropped")
                return
            sequence = self.sequence
            self.sequence += 1
            self.unfinished[address].append(sequence)
            target.put_nowait((sequence, packet))

    def _wait_for_turn(self, address, sequence):
        """A packet goes out only after the controller's earlier packets on the
        other IN endpoint were read by the host. Over the radio, a peer's first
        ACL packet comes a connection interval after the connection event; the
        virtual link has no such gap, and without this the host could see ACL
        for a connection it has not heard of yet. A host that does not read the
        other endpoint is waited for 2 s, then not at all until it reads again."""
        other = 0x82 if address == 0x81 else 0x81
        deadline = time.time() + 2
        with self.order:
            while self.alive and self.unfinished[other] and self.unfinished[other][0] < sequence:
                remaining = deadline - time.time()
                if remaining <= 0 or self.stuck == other:
                    if self.stuck != other:
                        log(f"endpoint 0x{other:02x} is not read by the host; order kept no longer")
                        self.stuck = other
                    return
                self.order.wait(remaining)

    def _finished(self, address, sequence):
        with self.order:
            queue_ = self.unfinished[address]
            if queue_ and queue_[0] == sequence:
                queue_.popleft()
            if self.stuck == address and not queue_:
                log(f"endpoint 0x{address:02x} is read again; order kept again")
                self.stuck = None
            self.order.notify_all()

    def _write_loop(self, address, packets, max_packet, zero_length_packets):
        fd = self.files[address]
        name = "event" if address == 0x81 else "acl-in"
        try:
            while self.alive:
                try:
                    sequence, packet = packets.get(timeout=0.2)
                except queue.Empty:
                    continue
                self._wait_for_turn(address, sequence)
                stall = os.path.join(HERE, f"stall-0x{address:02x}")
                if flags.take(stall):
                    # A test asked for one stall: a read on an IN endpoint halts it (GadgetFS);
                    # the packet goes out once the host has cleared the halt.
                    try:
                        os.read(fd, 1)
                    except OSError:
                        pass
                    log(f"{name}: endpoint 0x{address:02x} halted before a {len(packet)}-byte packet")
                babble = os.path.join(HERE, f"babble-0x{address:02x}")
                chunked = address == 0x81 and getattr(options, "babble", False)
                if chunked and flags.take(babble):
                    junk = b"\x0e\x12" + bytes(range(0xA0, 0xA0 + max_packet + 2))  # a Command Complete's header
                    try:
                        os.write(fd, junk)  # GadgetFS says all was taken; dummy_hcd dropped the rest
                        log(f"{name}: babbled: a {len(junk)}-byte transfer where the host asks for {max_packet}"
                            f" before a {len(packet)}-byte packet")
                    except OSError as error:
                        log(f"{name}: babble failed ({os.strerror(error.errno)})")
                try:
                    if chunked:  # one host-sized packet a write (see Configuration.__init__)
                        for at in range(0, len(packet), max_packet):
                            os.write(fd, packet[at:at + max_packet])
                    else:
                        os.write(fd, packet)  # returns when the host has read the whole transfer
                    if zero_length_packets and len(packet) % max_packet == 0:
                        os.write(fd, b"")  # ends a transfer that is a multiple of the max packet size
                        log(f"{name}: {len(packet)}-byte packet sent with a zero-length packet after it")
                    else:
                        trace(f"{name}: {len(packet)} bytes {packet[:8].hex()}")
                    self.dongle.note_size(name, len(packet), max_packet)
                except OSError as error:
                    if self.alive:
                        log(f"{name}: {len(packet)}-byte packet lost ({os.strerror(error.errno)})")
                finally:
                    self._finished(address, sequence)
        finally:
            os.close(fd)

    def _acl_out_loop(self):
        """Reads one max-size packet at a time, as a controller's USB engine sees
        them, and cuts the stream into ACL packets by their headers. Records
        whether a packet that is a multiple of the max packet size was ended by a
        zero-length packet (Vol 4 Part B; libusb's LIBUSB_TRANSFER_ADD_ZERO_PACKET).
        While the personality takes commands on bulk OUT (an Intel bootloader),
        the stream is HCI commands instead (opcode, 1-byte length, parameters)."""
        fd = self.files[0x02]
        size = self.bulk_max_packet
        buffer = b""
        expect_zlp = 0  # length of the packet that ended on a max-packet boundary
        try:
            while self.alive:
                try:
                    chunk = os.read(fd, size)
                except OSError as error:
                    if self.alive and error.errno != errno.ESHUTDOWN:  # ESHUTDOWN: a reset, reported on EP0
                        log(f"acl-out: read failed ({os.strerror(error.errno)})")
                    time.sleep(0.05)
                    continue
                if not chunk:
                    if expect_zlp:
                        log(f"acl-out: {expect_zlp}-byte packet ended by a zero-length packet")
                        expect_zlp = 0
                    else:
                        log("acl-out: unexpected zero-length packet")
                    continue
                if expect_zlp:
                    log(f"acl-out: {expect_zlp}-byte packet NOT ended by a zero-length packet")
                    expect_zlp = 0
                buffer += chunk
                while True:
                    commands = self.dongle.bulk_commands()
                    header, length_at, length_size = (3, 2, 1) if commands else (4, 2, 2)
                    if len(buffer) < header:
                        break
                    end = header + int.from_bytes(buffer[length_at:length_at + length_size], "little")
                    if len(buffer) < end:
                        break
                    packet, buffer = buffer[:end], buffer[end:]
                    name = "command-out" if commands else "acl-out"
                    trace(f"{name}: {len(packet)} bytes {packet[:8].hex()}")
                    self.dongle.note_size(name, len(packet), size)
                    if not buffer and len(chunk) == size and end % size == 0:
                        expect_zlp = end
                    if commands:
                        self.dongle.command(packet, via_bulk=True)
                    else:
                        self.dongle.link.send(b"\x02" + packet, "ACL packet")
                if len(chunk) < size and buffer:
                    log(f"acl-out: a short packet left {len(buffer)} bytes of an incomplete ACL packet; dropped")
                    buffer = b""
                stall = os.path.join(HERE, "stall-0x02")
                if flags.take(stall):
                    # A test asked for one stall: a write on an OUT endpoint halts it (GadgetFS). Here,
                    # between reads, so the host's next bulk OUT packet gets the STALL handshake.
                    try:
                        os.write(fd, b"\0")
                    except OSError:
                        pass
                    log(f"acl-out: endpoint 0x02 halted after a {len(chunk)}-byte packet")
        finally:
            os.close(fd)


class Dongle:
    """One plug-in: the dummy_udc control file (EP0), the controller link and,
    with --personality, the chip's state from power-on (a new one per plug-in)."""

    def __init__(self):
        trace("plug-in process started")
        self.link = ControllerLink(options.serial)
        self.configuration = None
        self.speed = 2
        self.lock = threading.Lock()
        self.largest = {}
        self.personality_lock = threading.Lock()
        self.power_on()
        path = os.path.join(options.gadgetfs, "dummy_udc")
        for _ in range(50):  # the previous plug-in may take a moment to be released
            try:
                self.control = os.open(path, os.O_RDWR)
                break
            except OSError as error:
                if error.errno != errno.EBUSY:
                    raise
                trace("dummy_udc busy")
                time.sleep(0.1)
        else:
            raise RuntimeError("dummy_udc stays busy")
        high = configuration_descriptor(True) if options.high_speed else b""
        os.write(self.control, struct.pack("<I", 0) + configuration_descriptor(False) + high
                 + device_descriptor(options.vid, options.pid))
        log("plugged in as %04x:%04x (%s speed)" % (options.vid, options.pid,
                                                    "high" if options.high_speed else "full"))
        threading.Thread(target=self.controller_loop, daemon=True).start()

    def power_on(self):
        """With --personality, the chip as it is at power-on (ffs_dongle.py: at each plug-in)."""
        self.personality = None
        self.control_answers = collections.deque()  # WMT answers waiting for the host's control IN read
        self.answers_held, self.answer_held_at = 0, None  # the first answers of each plug-in are held once
        if options.personality:
            import personalities
            self.personality = personalities.make(options.personality, options.firmware_dir, options.rom_version,
                                                  **mediatek_options())
            if getattr(self, "record", None) is None:
                self.record = open(os.path.join(HERE, "vendor-commands.hex"), "a", buffering=1)
            self.errors_seen = 0
            log(f"personality {options.personality} ({self.personality.vendor}), powered on")

    def controller_loop(self):
        """H4 from the controller → interrupt IN (events) / bulk IN (ACL); lost while not configured."""
        lost = 0
        for kind, packet in h4_packets(self.link):
            with self.lock:
                configuration = self.configuration
            if kind not in (0x02, 0x04):
                log(f"controller sent an H4 packet of type 0x{kind:02x}; no endpoint carries it, dropped")
            elif configuration is None:
                lost += 1
                if lost in (1, 10, 100) or lost % 1000 == 0:
                    log(f"{lost} packet(s) from the controller dropped: the device is not configured")
            else:
                configuration.deliver(kind, packet)

    def note_size(self, name, size, max_packet):
        """Logs each new largest packet per direction (so logs show fragments crossed packet boundaries)."""
        if size > self.largest.get(name, 0):
            self.largest[name] = size
            log(f"{name}: largest packet so far {size} bytes ({-(-size // max_packet)} USB packets)")

    def deconfigure(self, why):
        with self.lock:
            configuration, self.configuration = self.configuration, None
        if configuration:
            configuration.close()
            log(f"endpoints closed ({why})")

    def configure(self):
        self.deconfigure("new configuration")
        configuration = Configuration(self, self.speed)
        with self.lock:
            self.configuration = configuration

    def stall(self, request_type, request, value, index, length):
        log(f"stalled request {request_type:02x} {request:02x} value {value:04x} index {index:04x} length {length}")
        try:
            if request_type & 0x80:
                os.read(self.control, 0)  # an IN request: a read is the wrong direction, so EP0 stalls
            else:
                os.write(self.control, b"\0")  # an OUT request: a write stalls
        except OSError:
            pass

    def setup(self, request_type, request, value, index, length):
        if request_type == 0x00 and request == 9:  # SET_CONFIGURATION (cannot be stalled)
            if value:
                if self.configuration is not None:
                    # Configured already: the host reset the port and its DISCONNECT event was
                    # purged by the CONNECT after it (GadgetFS keeps no event across a
                    # reconnection; seen in a loaded guest, where a fault flag then outlived
                    # the port reset that must clear it).
                    self.bus_reset()
                self.configure()
            else:
                self.deconfigure("configuration 0")
            os.read(self.control, 0)
        elif request_type == 0x80 and request == 6 and value >> 8 == 3:  # GET_DESCRIPTOR (string)
            descriptor = string_descriptor(value & 0xFF)
            if descriptor is None:
                self.stall(request_type, request, value, index, length)
            else:
                os.write(self.control, descriptor[:length])
        elif request_type == 0x01 and request == 11 and value == 0 and index == 0:  # SET_INTERFACE 0, alt 0
            os.read(self.control, 0)
        elif request_type in (0x20, 0x21) and request == 0 and length >= 3:  # HCI command
            data = self.data_stage(length)
            if data is None:
                return
            trace(f"command: {data.hex()}")
            problem = command_problem(data, length)
            if problem is not None:
                # GadgetFS handed this read another request's buffer: a request it serves
                # itself (GET_DESCRIPTOR) came between this one's SETUP and the read of its
                # data (inode.c's gadgetfs_setup points dev->req at the descriptor), and
                # ep0_read's clean_req then freed that buffer, so the host reads garbage as
                # the configuration descriptor from then on. Forwarded, the bytes would also
                # throw the H4 stream to the controller out of step. A real dongle never
                # sees this: plugged in again, as a power-cycled one.
                log(f"ep0: HCI command data {data[:12].hex()} is not one command ({problem}): GadgetFS"
                    " mixed two requests; plugging in again")
                os._exit(0)
            self.command(data)
        elif hasattr(self.personality, "read_register") and self.vendor_request(request_type, request, value, index, length):
            pass
        else:
            self.stall(request_type, request, value, index, length)

    def data_stage(self, length):
        """The OUT data of a control request, or None when it never comes: a host
        that cancels the transfer after its SETUP (btusb detached in the middle of
        a command, as our binary does when it takes a dongle the kernel is setting
        up) sends none. On a real bus the transfer just ends; here the read would
        wait for ever and hold EP0, so every later request, HCI Reset included,
        would go unanswered. It gives up after DATA_STAGE_LIMIT seconds."""
        signal.signal(signal.SIGALRM, data_stage_timeout)
        signal.setitimer(signal.ITIMER_REAL, DATA_STAGE_LIMIT)
        try:
            return os.read(self.control, length)
        except DataStageTimeout:
            log(f"ep0: no data for a {length}-byte request within {DATA_STAGE_LIMIT} s (the host cancelled it); dropped")
            return None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def vendor_request(self, request_type, request, value, index, length):
        """MediaTek's vendor requests (Linux btmtk.c): register reads (0xC0/0x63
        the id space, 0xDE/0x01 UHW), UHW writes (0x5E/0x02), and the WMT answer
        read (0xC0/0x01, value 0x30: the oldest answer, or nothing yet). Each is
        recorded in vendor-control.txt. False: not one of them (stalled)."""
        line = f"{request_type:02x} {request:02x} {value:04x} {index:04x} {length}"
        if request_type == 0xC0 and request == 0x01 and value == 0x30:
            # The first HELD_ANSWERS answers of a plug-in are held for one read ("nothing
            # yet", as a busy chip answers), so the host asks again: btmtk_usb_wmt_recv
            # waits 500 µs between the two requests. The gap is measured with this side's
            # clock and appended to vendor-answer-gaps.txt (µs): from just before the empty
            # answer is handed over (the host cannot have it earlier) to the read of the
            # next request (it cannot have come later), so it holds the host's whole gap
            # and never reads short, whatever the scheduler does to this thread; a host
            # that asks again at once shows the bus's round trip (from 490 µs up in the QEMU
            # guest, so test_vendor.py holds it to this program's 1 ms). The second figure is
            # from after the write (FunctionFS returns once the host has taken the
            # answer), which this thread's wake-up can make read short: for the record.
            # FunctionFS: when ep0's read returned this request (ffs_dongle.ep0_loop); else now.
            asked = getattr(self, "requests_read_at", None) or time.monotonic()
            held = getattr(self, "answer_held_at", None)
            if held is not None:
                self.answer_held_at = None
                with open(os.path.join(HERE, "vendor-answer-gaps.txt"), "a") as f:
                    f.write(f"{(asked - held[0]) * 1e6:.0f} {(asked - held[1]) * 1e6:.0f}\n")
            with self.personality_lock:
                hold = (held is None and self.control_answers
                        and getattr(self, "answers_held", 0) < HELD_ANSWERS)
                answer = b"" if hold or not self.control_answers else self.control_answers.popleft()
            trace(f"answer read: {answer.hex() or 'nothing yet'}")
            handed = time.monotonic()
            os.write(self.control, answer[:length])
            if hold:
                self.answers_held = getattr(self, "answers_held", 0) + 1
                self.answer_held_at = (handed, time.monotonic())
            return True
        address = value << 16 | index
        if (request_type, request) in ((0xC0, 0x63), (0xDE, 0x01)) and length == 4:
            with self.personality_lock:
                resets = self.personality.resets
                read = self.personality.read_register(0 if request == 0x63 else 1, address)
            self.note_control(f"{line} -> {'stall' if read is None else f'{read:08x}'}")
            self.note_register_effects(resets)
            if read is None:
                return False
            os.write(self.control, struct.pack("<I", read))
            return True
        if (request_type, request) == (0x5E, 0x02) and length == 4:
            data = self.data_stage(length)
            if data is None:
                return True
            with self.personality_lock:
                resets = self.personality.resets
                self.personality.write_register(1, address, struct.unpack("<I", data)[0])
            self.note_control(f"{line} <- {struct.unpack('<I', data)[0]:08x}")
            self.note_register_effects(resets)
            return True
        return False

    def note_register_effects(self, resets):
        """After a register request: the subsystem reset it completed, the errors it made."""
        if self.personality.resets > resets:
            log("subsystem reset by btmtk.c's register sequence: the chip is cold, its RAM code gone")
        self.note_errors()

    def note_control(self, line):
        with open(os.path.join(HERE, "vendor-control.txt"), "a") as f:
            f.write(line + "\n")

    def note_errors(self):
        """The personality's new protocol errors: logged and appended to vendor-errors.txt."""
        with self.personality_lock:
            errors = self.personality.errors[self.errors_seen:]
            self.errors_seen += len(errors)
        for error in errors:
            log(f"personality error: {error}")
            with open(os.path.join(HERE, "vendor-errors.txt"), "a") as f:
                f.write(error + "\n")

    def bulk_commands(self):
        return self.personality is not None and self.personality.bulk_commands

    def command(self, data, via_bulk=False):
        """An HCI command from the host (EP0, or bulk OUT for an Intel bootloader)."""
        opcode = struct.unpack_from("<H", data)[0]
        if flags.present(SWALLOW_FLAG):
            log("HCI command 0x%04x swallowed: the controller does not answer commands" % opcode)
            return
        for flag, until in ((SILENT_FLAG, "a port reset"), (REENUMERATE_FLAG, "a re-enumeration")):
            if flags.present(flag):
                log("HCI command 0x%04x swallowed: silent until %s" % (opcode, until))
                return
        if opcode == 0x0C03 and os.path.exists(HANG_FLAG):
            # The warm-start hang of some dongles: HCI Reset is taken and never answered.
            log("HCI Reset dropped: hanging until a port reset")
            return
        if self.personality is None:
            self.link.send(b"\x01" + data, "HCI command 0x%04x" % opcode)
            return
        if hasattr(self.personality, "wedge") and flags.take(WEDGE_FLAG):
            with self.personality_lock:
                self.personality.wedge()
            log("the chip wedged: it drops every HCI command until its subsystem reset")
        with self.personality_lock:
            self.record.write(data.hex() + (" bulk" if via_bulk else "") + "\n")
            try:
                replies = self.personality.on_command(bytes(data), via_bulk=via_bulk)
            except Exception as error:  # noqa: BLE001 - a broken personality must show in the log, not kill EP0
                log(f"personality failed on command {data[:8].hex()}: {error!r}")
                replies = []
            wedged = getattr(self.personality, "wedged", False)
        self.note_errors()
        if wedged:
            log("HCI command 0x%04x dropped: the chip is wedged" % opcode)
        if replies is None:
            self.link.send(b"\x01" + data, "HCI command 0x%04x" % opcode)
            return
        with self.lock:
            configuration = self.configuration
        for endpoint, event in replies:
            trace(f"personality: {endpoint} {event[:8].hex()}")
            if endpoint == "control":  # read by the host through a vendor control request (MediaTek's WMT)
                with self.personality_lock:
                    self.control_answers.append(event)
            elif configuration is None:
                log(f"personality reply to 0x{opcode:04x} dropped: the device is not configured")
            else:
                configuration.deliver(0x04, event, 0x82 if endpoint == "bulk" else 0x81)

    def ep0_loop(self):
        aborted_at = None  # when GadgetFS aborted a request (EIDRM) with no disconnect seen since
        while True:
            if aborted_at is not None and not select.select([self.control], [], [], 0.5)[0]:
                if time.monotonic() - aborted_at > ABORT_LIMIT:
                    # No disconnect or connection followed: the host sent a new SETUP before the
                    # aborted request's data was read (GadgetFS's setup_abort; seen in btusb's
                    # set-up in a loaded guest, right after an enumeration), and GadgetFS's
                    # control endpoint answers nothing sensible after that (not HCI commands,
                    # not even the configuration descriptor). Plugged in again, as a
                    # power-cycled dongle.
                    log(f"ep0: no disconnect within {ABORT_LIMIT} s of an aborted request: the emulation's"
                        " control endpoint is wedged; plugging in again")
                    os._exit(0)
                continue
            try:
                data = os.read(self.control, 12 * 8)
            except OSError as error:
                if error.errno in (errno.EINTR, errno.EAGAIN):
                    continue
                log(f"ep0: read failed ({os.strerror(error.errno)})")
                time.sleep(0.1)
                continue
            for offset in range(0, len(data) - 11, 12):
                event = data[offset:offset + 12]
                kind = struct.unpack_from("<I", event, 8)[0]
                if kind in (CONNECT, DISCONNECT):
                    aborted_at = None  # the abort was this reset's
                if kind == CONNECT:
                    self.speed = struct.unpack_from("<I", event)[0]
                    log(f"connected at {SPEEDS.get(self.speed, self.speed)} speed")
                elif kind == DISCONNECT:
                    self.bus_reset()
                elif kind == SUSPEND:
                    trace("suspended")
                elif kind == SETUP:
                    request = struct.unpack_from("<BBHHH", event)
                    try:
                        self.setup(*request)
                    except OSError as error:
                        log(f"ep0: request {request} failed ({os.strerror(error.errno)})")
                        if error.errno == errno.EIDRM:
                            # GadgetFS aborted the request: a disconnect or a reset (its event
                            # follows, or a reconnection purged it and CONNECT follows), or a
                            # new SETUP first (nothing follows: see above).
                            aborted_at = time.monotonic()

    def bus_reset(self):
        """A disconnect or a port reset by the host (idempotent: the event and a
        SET_CONFIGURATION while configured may both say so)."""
        self.deconfigure("disconnect or reset by the host")
        if flags.drop(HANG_FLAG):
            log("port reset: the controller answers HCI Reset again")
        if flags.drop(SILENT_FLAG):
            log("port reset: the controller answers commands again")
        if flags.drop(REENUMERATE_FLAG):
            # The supervisor plugs in a new plug-in process a second later.
            log("port reset: leaving the bus to enumerate again as a new device")
            os._exit(0)


def command_problem(data, length):
    """Why `data`, read as the data stage of a `length`-byte HCI command request,
    is not that one whole command (Core Vol 4 Part E §5.4.1: opcode, parameter
    length, parameters); None when it is."""
    if len(data) != length:
        return f"{len(data)} bytes for a {length}-byte request"
    if 3 + data[2] != length:
        return f"its parameter length makes {3 + data[2]} bytes, the request {length}"
    return None


DATA_STAGE_LIMIT = 2.0
# Seconds after an aborted control request (EIDRM) within which a reset's event must come.
ABORT_LIMIT = 2.0
# MediaTek WMT answers held once each (vendor_request) per plug-in.
HELD_ANSWERS = 40


class DataStageTimeout(Exception):
    pass


def data_stage_timeout(number, frame):
    raise DataStageTimeout()


# While this file exists the dongle plays a controller that hangs after a warm
# start: it drops HCI Reset until the host resets its port (tests create it).
HANG_FLAG = os.path.join(HERE, "hang-until-port-reset")
# While this file exists the controller answers no HCI command (they are dropped).
SWALLOW_FLAG = os.path.join(HERE, "swallow-commands")
# Silent until the host resets the port; the second one then leaves the bus and enumerates again.
SILENT_FLAG = os.path.join(HERE, "silent-until-port-reset")
REENUMERATE_FLAG = os.path.join(HERE, "silent-until-reenumerated")
# MediaTek: the chip wedges at the next command, until its subsystem reset.
WEDGE_FLAG = os.path.join(HERE, "wedged-until-chip-reset")


def mediatek_options():
    """The MediaTek personality's options from --mtk-warm, --mtk-fault and --mtk-present (none for the other chips)."""
    present = getattr(options, "mtk_present", None)
    return {**({"warm": True} if options.mtk_warm else {}), **({"fault": options.mtk_fault} if options.mtk_fault else {}),
            **({"present": [int(i) for i in present.split(",")]} if present else {})}


# ---------------------------------------------------------------- supervisor

def serve_plug_in():
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM, signal.SIGCHLD})
    for number in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM):
        signal.signal(number, signal.SIG_DFL)
    Dongle().ep0_loop()


def spawn():
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            serve_plug_in()
        except BaseException as error:  # noqa: BLE001 - the supervisor restarts us; say why
            log(f"plug-in process failed: {error!r}")
        finally:
            os._exit(code)
    return pid


def main():
    global options
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--id", help="VID:PID in hex (default: the personality's, else CSR 0a12:0001)")
    parser.add_argument("--personality",
                        help="a Realtek, Intel or Broadcom chip (personalities.CHIPS), e.g. rtl8761bu, ax210, bcm20702a1")
    parser.add_argument("--firmware-dir",
                        help="the folder holding intel/, rtl_bt/ and brcm/ (what the personality checks against)")
    parser.add_argument("--rom-version", type=int, help="Realtek: the ROM version the chip reports")
    parser.add_argument("--mtk-warm", action="store_true", help="MediaTek: the RAM code runs already")
    parser.add_argument("--mtk-fault", help="MediaTek: one malformed answer (personalities.MTK_FAULTS)")
    parser.add_argument("--mtk-present", help="MediaTek: these sections (e.g. 1,2) are there already; the others come")
    parser.add_argument("--high-speed", action="store_true", help="also offer high-speed descriptors (bulk 512 bytes)")
    parser.add_argument("--trace", action="store_true", help="log every packet")
    parser.add_argument("--malformed-descriptor", action="store_true",
                        help="show the host a configuration descriptor whose interrupt IN endpoint is 6 bytes long")
    parser.add_argument("--babble", action="store_true",
                        help="make babble possible on interrupt IN (the babble-0x81 file asks for one)")
    parser.add_argument("gadgetfs")
    parser.add_argument("serial")
    options = parser.parse_args()
    options.usb_class = None
    if options.id:
        options.vid, options.pid = (int(x, 16) for x in options.id.split(":"))
    elif options.personality:
        import personalities
        if options.personality not in personalities.CHIPS:
            parser.error(f"unknown personality {options.personality}; known: {', '.join(sorted(personalities.CHIPS))}")
        chip = personalities.make(options.personality, options.firmware_dir, options.rom_version)
        options.vid, options.pid = chip.usb_id
        options.usb_class = chip.usb_class
    else:
        options.vid, options.pid = 0x0A12, 0x0001

    watched = {signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM, signal.SIGCHLD}
    signal.pthread_sigmask(signal.SIG_BLOCK, watched)
    child = spawn()
    wanted = True  # plugged in, unless SIGUSR1 said otherwise
    while True:
        number = signal.sigwait(watched)
        if number == signal.SIGCHLD:
            if child and os.waitpid(child, os.WNOHANG)[0] == child:
                child = 0
                if wanted:
                    log("plug-in process ended; plugging in again")
                    time.sleep(1)
                    child = spawn()
            continue
        if number in (signal.SIGUSR1, signal.SIGTERM):
            wanted = False
            if child:
                os.kill(child, signal.SIGKILL)
                os.waitpid(child, 0)
                child = 0
                log("unplugged")
            if number == signal.SIGTERM:
                return
        elif number == signal.SIGUSR2:
            wanted = True
            if not child:
                child = spawn()


if __name__ == "__main__":
    main()
