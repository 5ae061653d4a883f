"""A Realtek personality in front of a Bumble virtual controller (H4 over TCP).

Until a patch is downloaded it is an un-patched Realtek ROM: it answers HCI
Reset and Read Local Version Information itself (the ROM's HCI version/revision
and LMP subversion of the chosen chip, manufacturer 0x005D Realtek), answers the
vendor commands Read ROM Version (0xFC6D) and Download (0xFC20: fragments of 252
bytes, index 0…127 then wrapping, bit 7 on the last; the index is checked and the
bytes recorded), and forwards anything else to the Bumble controller. After the
last fragment it is patched: every command goes to the Bumble controller (a
normal LE controller on the shared LocalLink), except the vendor commands.

Every HCI command received is appended to --record FILE as one hex line; the
downloaded payload goes to --payload FILE.

Usage: python realtek_controller.py [--chip rtl8761bu] [--rom-version N]
       [--record FILE] [--payload FILE] [--plain N]
Prints "PORTS realtek_port plain_port…" (plain: ordinary Bumble controllers on the
same link, for the peers) and runs until killed."""
import argparse
import asyncio
import signal
import socket
import struct
import sys

from bumble.controller import Controller
from bumble.link import LocalLink
from bumble.transport.tcp_server import open_tcp_server_transport_with_socket

# chip → (HCI version, HCI revision, LMP subversion) of the un-patched ROM
# (the values Linux btrtl.c and Bumble's rtk driver match on).
CHIPS = {
    "rtl8723b": (0x06, 0x000B, 0x8723),
    "rtl8723d": (0x08, 0x000D, 0x8723),
    "rtl8821c": (0x08, 0x000C, 0x8821),
    "rtl8761bu": (0x0A, 0x000B, 0x8761),
    "rtl8822b": (0x07, 0x000B, 0x8822),
    "rtl8822c": (0x0A, 0x000C, 0x8822),
    "rtl8852a": (0x0B, 0x000A, 0x8852),
    "rtl8852b": (0x0B, 0x000B, 0x8852),
    "rtl8852c": (0x0C, 0x000C, 0x8852),
}
RESET, READ_LOCAL_VERSION = 0x0C03, 0x1001
READ_ROM_VERSION, DOWNLOAD = 0xFC6D, 0xFC20


def command_complete(opcode, params):
    return bytes([0x04, 0x0E, 3 + len(params), 1, opcode & 0xFF, opcode >> 8]) + bytes(params)


class RealtekFront:
    def __init__(self, chip, rom_version, sink, record, payload_path):
        self.version = CHIPS[chip]
        self.rom_version = rom_version
        self.sink = sink
        self.record = open(record, "a") if record else None
        self.payload_path = payload_path
        self.controller = None
        self.patched = False
        self.fragments = 0
        self.payload = bytearray()
        self.errors = []

    def reply(self, packet):
        self.sink.on_packet(packet)

    def on_packet(self, packet):
        packet = bytes(packet)
        if packet[0] != 0x01:
            self.controller.on_packet(packet)
            return
        if self.record:
            self.record.write(packet.hex() + "\n")
            self.record.flush()
        opcode = packet[1] | packet[2] << 8
        if opcode == READ_ROM_VERSION:
            self.reply(command_complete(opcode, [0, self.rom_version]))
        elif opcode == DOWNLOAD:
            self.download(packet[4:4 + packet[3]])
        elif not self.patched and opcode == RESET:
            self.reply(command_complete(opcode, [0]))
        elif not self.patched and opcode == READ_LOCAL_VERSION:
            hci_version, hci_revision, lmp_subversion = self.version
            self.reply(command_complete(opcode, [0, hci_version, *struct.pack("<H", hci_revision), hci_version,
                                                 0x5D, 0x00, *struct.pack("<H", lmp_subversion)]))
        else:
            self.controller.on_packet(packet)

    def download(self, params):
        index, data = params[0], params[1:]
        i = self.fragments
        wanted = {i & 0x7F} if i <= 0x7F else {(i & 0x7F) + 1, i & 0x7F}
        if index & 0x7F not in wanted:
            self.errors.append(f"fragment {i}: index {index:#x}")
            self.reply(command_complete(DOWNLOAD, [0x12, index]))  # Invalid HCI Command Parameters
            return
        self.fragments += 1
        self.payload += data
        self.reply(command_complete(DOWNLOAD, [0, index]))
        if index & 0x80:
            self.patched = True
            if self.payload_path:
                with open(self.payload_path, "wb") as f:
                    f.write(self.payload)


async def main(args):
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
            front = RealtekFront(args.chip, args.rom_version, transport.sink, args.record, args.payload)
            front.controller = Controller("RTK", host_sink=transport.sink, link=link)
            transport.source.set_packet_sink(front)
            keep.append((transport, front))
        else:
            keep.append((transport, Controller(f"C{index}", host_source=transport.source,
                                               host_sink=transport.sink, link=link)))
    print("PORTS", *ports, flush=True)
    await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--chip", default="rtl8761bu", choices=sorted(CHIPS))
    parser.add_argument("--rom-version", type=int, default=1)
    parser.add_argument("--record")
    parser.add_argument("--payload")
    parser.add_argument("--plain", type=int, default=1)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        asyncio.run(main(parser.parse_args()))
    except KeyboardInterrupt:
        sys.exit(130)
