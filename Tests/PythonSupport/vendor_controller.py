"""A vendor personality (Tests/PythonSupport/personalities.py: an un-patched Realtek
ROM or an Intel bootloader) in front of a Bumble virtual controller, H4 over
TCP. The personality answers what the chip answers before and while its
firmware is loaded and checks the download; whatever it does not answer goes
to the Bumble controller (a normal LE controller on the shared LocalLink).

Every HCI command received is appended to --record FILE as one hex line; a
Realtek download's payload goes to --payload FILE; --errors FILE gets the
personality's protocol violations, one a line, as they happen.

--pty PATH puts the vendor controller on a pseudo-terminal pair instead of
TCP (PATH: a symlink to its slave side), as a UART: the port's termios speed
is read for every command, and a personality with a UART rate (Broadcom) only
understands bytes sent at its rate (others are dropped as a chip would, and
listed in --errors); the rate each command came at is recorded in --record
after the hex, as " @BAUD".

--wedged: the chip answers nothing, at any rate, as one left in minidriver
mode by an interrupted download, until its power line goes low. --power-log
FILE is that line: the fake gpiochip's log (Tests/PythonSupport/fake_gpiochip.c),
read before each packet; the line driven low powers the chip off (nothing
answered, a command then is an error), high powers it on afresh at 115200
(the personality's power_cycle), and a command within 100 ms of that is an
error (Linux hci_bcm waits 100 to 120 ms after power on). SIGUSR1 wedges the
chip again (a chip that stops answering mid-run).

Usage: python vendor_controller.py [--chip rtl8761bu|ax210|bcm43430a1|...] [--firmware-dir DIR]
       [--rom-version N] [--engine rsa|ecdsa] [--record FILE] [--payload FILE]
       [--errors FILE] [--plain N] [--pty PATH] [--wedged] [--power-log FILE]
Prints "PORTS vendor_port plain_port..." (plain: ordinary Bumble controllers on
the same link, for the peers; vendor_port 0 with --pty) and runs until killed. Its controllers send real
scan responses (controllers.py, send_real_scan_responses)."""
import argparse
import asyncio
import os
import signal
import socket
import sys
import termios
import time
import tty

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import personalities  # noqa: E402
from controllers import send_real_scan_responses  # noqa: E402
from bumble.controller import Controller  # noqa: E402
from bumble.link import LocalLink  # noqa: E402
from bumble.transport.tcp_server import open_tcp_server_transport_with_socket  # noqa: E402


class PowerLine:
    """The chip's power line as the fake gpiochip logged it: REQUEST (with
    its output value) and SET lines, in order."""
    POWER_ON_WAIT = 0.1

    def __init__(self, path, wedged):
        self.path, self.read = path, 0
        self.wedged = wedged
        self.on = True
        self.on_since = 0.0

    def follow(self, personality):
        if self.path and os.path.exists(self.path):
            with open(self.path) as f:
                f.seek(self.read)
                lines = f.readlines()
                self.read = f.tell()
            for line in lines:
                parts = line.split()
                if parts[1] == "REQUEST" and parts[5] != "-":
                    value = int(parts[5])
                elif parts[1] == "SET":
                    value = int(parts[4])
                else:
                    continue
                if value == 0 and self.on:
                    self.on = False
                elif value == 1 and not self.on:
                    self.on, self.on_since, self.wedged = True, float(parts[0]), False
                    personality.power_cycle()

    def refuses(self, personality, packet):
        """Whether the chip drops the packet (off, wedged, or just powered on)."""
        if not self.on:
            personality.errors.append(f"{len(packet)} bytes while the chip is powered off")
            return True
        if self.wedged:
            return True
        if time.monotonic() < self.on_since + self.POWER_ON_WAIT:
            personality.errors.append(f"{len(packet)} bytes {1000 * (time.monotonic() - self.on_since):.0f} ms "
                                      "after power on (Linux waits 100 ms)")
            return True
        return False


class VendorFront:
    def __init__(self, personality, sink, record, payload_path, errors_path, power=None):
        self.personality = personality
        self.sink = sink
        self.record = open(record, "a") if record else None
        self.errors = open(errors_path, "a") if errors_path else None
        self.payload_path = payload_path
        self.controller = None
        self.reported = 0
        self.power = power

    def on_packet(self, packet, baud=None):
        packet = bytes(packet)
        if self.power:
            self.power.follow(self.personality)
            if self.power.refuses(self.personality, packet):
                self.report_errors()
                return
        if baud is not None and getattr(self.personality, "baud", None) not in (None, baud):
            # The chip listens at another rate: what it hears is noise.
            self.personality.errors.append(f"{len(packet)} bytes at {baud} baud while the chip listens at "
                                           f"{self.personality.baud}")
            self.report_errors()
            return
        if packet[0] != 0x01:
            self.controller.on_packet(packet)
            return
        if self.record:
            self.record.write(packet.hex() + (f" @{baud}" if baud else "") + "\n")
            self.record.flush()
        p = self.personality
        was_patched = getattr(p, "patched", False)
        replies = p.on_command(packet[1:])
        if replies is None:
            self.controller.on_packet(packet)
        else:
            for _endpoint, event in replies:
                self.sink.on_packet(b"\x04" + event)
        if self.payload_path and getattr(p, "patched", False) and not was_patched:
            with open(self.payload_path, "wb") as f:
                f.write(p.payload)
        self.report_errors()

    def report_errors(self):
        p = self.personality
        if self.errors and len(p.errors) > self.reported:
            for line in p.errors[self.reported:]:
                self.errors.write(line + "\n")
            self.errors.flush()
            self.reported = len(p.errors)


SPEEDS = {getattr(termios, f"B{rate}"): rate for rate in (9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600,
                                                          1000000, 2000000, 3000000)}


class PtyUart:
    """The vendor controller's side of a pseudo-terminal pair: H4 in from the
    master, cut into packets, each handed over with the slave's current speed;
    H4 out to the master."""

    def __init__(self, path):
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        attrs = termios.tcgetattr(self.slave)
        attrs[4] = attrs[5] = termios.B115200
        termios.tcsetattr(self.slave, termios.TCSANOW, attrs)
        if os.path.lexists(path):
            os.unlink(path)
        os.symlink(os.ttyname(self.slave), path)
        self.path = path
        self.buffer = bytearray()
        self.front = None

    def baud(self):
        return SPEEDS.get(termios.tcgetattr(self.slave)[5], 0)

    def on_packet(self, packet):
        os.write(self.master, bytes(packet))

    def readable(self):
        try:
            self.buffer += os.read(self.master, 65536)
        except OSError:
            return
        while self.buffer:
            kind = self.buffer[0]
            header = {1: 3, 2: 4, 3: 3}.get(kind)
            if header is None:
                self.buffer.pop(0)  # noise at another rate
                continue
            if len(self.buffer) < 1 + header:
                return
            length = self.buffer[3] if kind in (1, 3) else self.buffer[3] | self.buffer[4] << 8
            if len(self.buffer) < 1 + header + length:
                return
            packet = bytes(self.buffer[:1 + header + length])
            del self.buffer[:1 + header + length]
            self.front.on_packet(packet, baud=self.baud())


async def main(args):
    options = {}
    if args.engine:
        options["engine"] = {"rsa": personalities.RSA, "ecdsa": personalities.ECDSA}[args.engine]
    if args.warm:
        options["warm"] = True
    if args.fault:
        options["fault"] = args.fault
    if args.fw_id is not None:
        options["fw_id"] = bytes.fromhex(args.fw_id)
    personality = personalities.make(args.chip, args.firmware_dir, args.rom_version, **options)
    link = LocalLink()
    keep, ports = [], []
    for index in range(1 + args.plain):
        if index == 0 and args.pty:
            uart = PtyUart(args.pty)
            power = PowerLine(args.power_log, args.wedged) if args.power_log or args.wedged else None
            front = VendorFront(personality, uart, args.record, args.payload, args.errors, power)
            if power:
                asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, lambda: setattr(power, "wedged", True))
            front.controller = Controller("VENDOR", host_sink=uart, link=link)
            uart.front = front
            asyncio.get_running_loop().add_reader(uart.master, uart.readable)
            keep.append((uart, front))
            ports.append(0)
            continue
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        ports.append(sock.getsockname()[1])
        transport = await open_tcp_server_transport_with_socket(sock)
        if index == 0:
            front = VendorFront(personality, transport.sink, args.record, args.payload, args.errors)
            front.controller = Controller("VENDOR", host_sink=transport.sink, link=link)
            transport.source.set_packet_sink(front)
            keep.append((transport, front))
        else:
            keep.append((transport, Controller(f"C{index}", host_source=transport.source,
                                               host_sink=transport.sink, link=link)))
    print("PORTS", *ports, flush=True)
    await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    send_real_scan_responses()  # as controllers.py's: the advertiser's scan response, not its advertising data again
    parser = argparse.ArgumentParser()
    parser.add_argument("--chip", default="rtl8761bu", choices=sorted(personalities.CHIPS))
    parser.add_argument("--firmware-dir")
    parser.add_argument("--rom-version", type=int)
    parser.add_argument("--engine", choices=["rsa", "ecdsa"])
    parser.add_argument("--record")
    parser.add_argument("--payload")
    parser.add_argument("--errors")
    parser.add_argument("--plain", type=int, default=1)
    parser.add_argument("--pty")
    parser.add_argument("--wedged", action="store_true", help="--pty: silent until a power cycle")
    parser.add_argument("--power-log", help="--pty: the fake gpiochip's log, the chip's power line")
    parser.add_argument("--warm", action="store_true", help="MediaTek: the RAM code runs already")
    parser.add_argument("--fault", choices=personalities.MTK_FAULTS, help="MediaTek: one malformed answer")
    parser.add_argument("--fw-id", help="Intel, variant 0x1e on: run the intermediate loader, this firmware id (hex)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        asyncio.run(main(parser.parse_args()))
    except KeyboardInterrupt:
        sys.exit(130)
