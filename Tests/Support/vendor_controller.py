"""A vendor personality (Tests/Support/personalities.py: an un-patched Realtek
ROM or an Intel bootloader) in front of a Bumble virtual controller, H4 over
TCP. The personality answers what the chip answers before and while its
firmware is loaded and checks the download; whatever it does not answer goes
to the Bumble controller (a normal LE controller on the shared LocalLink).

Every HCI command received is appended to --record FILE as one hex line; a
Realtek download's payload goes to --payload FILE; --errors FILE gets the
personality's protocol violations, one a line, as they happen.

Usage: python vendor_controller.py [--chip rtl8761bu|ax210|...] [--firmware-dir DIR]
       [--rom-version N] [--engine rsa|ecdsa] [--record FILE] [--payload FILE]
       [--errors FILE] [--plain N]
Prints "PORTS vendor_port plain_port..." (plain: ordinary Bumble controllers on
the same link, for the peers) and runs until killed. Its controllers send real
scan responses (controllers.py, send_real_scan_responses)."""
import argparse
import asyncio
import os
import signal
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import personalities  # noqa: E402
from controllers import send_real_scan_responses  # noqa: E402
from bumble.controller import Controller  # noqa: E402
from bumble.link import LocalLink  # noqa: E402
from bumble.transport.tcp_server import open_tcp_server_transport_with_socket  # noqa: E402


class VendorFront:
    def __init__(self, personality, sink, record, payload_path, errors_path):
        self.personality = personality
        self.sink = sink
        self.record = open(record, "a") if record else None
        self.errors = open(errors_path, "a") if errors_path else None
        self.payload_path = payload_path
        self.controller = None
        self.reported = 0

    def on_packet(self, packet):
        packet = bytes(packet)
        if packet[0] != 0x01:
            self.controller.on_packet(packet)
            return
        if self.record:
            self.record.write(packet.hex() + "\n")
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
        if self.errors and len(p.errors) > self.reported:
            for line in p.errors[self.reported:]:
                self.errors.write(line + "\n")
            self.errors.flush()
            self.reported = len(p.errors)


async def main(args):
    options = {}
    if args.engine:
        options["engine"] = {"rsa": personalities.RSA, "ecdsa": personalities.ECDSA}[args.engine]
    personality = personalities.make(args.chip, args.firmware_dir, args.rom_version, **options)
    link = LocalLink()
    keep, ports = [], []
    for index in range(1 + args.plain):
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
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        asyncio.run(main(parser.parse_args()))
    except KeyboardInterrupt:
        sys.exit(130)
