"""Starts N Bumble virtual controllers on one LocalLink, each an H4 tcp-server on
a free loopback port (bound to port 0, so no race) or on the ports given with
--ports, plus one controller per extra Bumble transport given (e.g.
pty:/tmp/x/tty for the serial transport), prints "PORTS p1 … pN" and runs until
killed or Ctrl-C (exit status 130, no traceback).

The controllers send real scan responses: Bumble 0.0.236's virtual controller
answers an active scan with the advertising data a second time, flagged as the
scan response (controller.py, on_advertising_pdu), so a name that only the scan
response carries in full is never seen whole. Here the advertising PDU carries
the advertiser's scan response data across the link and the scanner's
controller reports that, as a radio does.

--split SECONDS: the first controller sends each packet to its host in two
writes, the H4 packet type and, SECONDS later, the rest: one wake-up more per
packet for the host, with the same packets (the benches' split runs).
Usage: python Tests/PythonSupport/controllers.py [N=2] [TRANSPORT…] [--split S] [--ports P1 … PN]"""
import asyncio
import dataclasses
import signal
import socket
import sys

from bumble import hci, ll
from bumble.controller import Controller
from bumble.link import LocalLink
from bumble.transport import open_transport
from bumble.transport.tcp_server import open_tcp_server_transport_with_socket


def send_real_scan_responses():
    send_pdu, on_pdu = Controller.send_advertising_pdu, Controller.on_advertising_pdu

    def send_advertising_pdu(self, packet):
        if isinstance(packet, ll.AdvInd):
            packet.scan_response_data = bytes(self.le_legacy_advertiser.scan_response_data)
        elif isinstance(packet, ll.AdvExtInd):
            for advertising_set in self.advertising_sets.values():
                if advertising_set.enabled and advertising_set.address == packet.advertiser_address:
                    packet.scan_response_data = bytes(advertising_set.scan_response_data)
        send_pdu(self, packet)

    def is_scan_response(report):
        if isinstance(report, hci.HCI_LE_Extended_Advertising_Report_Event.Report):
            return bool(report.event_type & hci.HCI_LE_Extended_Advertising_Report_Event.EventType.SCAN_RESPONSE)
        return report.event_type == hci.HCI_LE_Advertising_Report_Event.EventType.SCAN_RSP

    def on_advertising_pdu(self, pdu):
        scan_response = getattr(pdu, "scan_response_data", None)
        if scan_response is None:
            return on_pdu(self, pdu)
        send = self.send_hci_packet

        def send_with_scan_response(packet):
            if isinstance(packet, (hci.HCI_LE_Advertising_Report_Event, hci.HCI_LE_Extended_Advertising_Report_Event)):
                packet = type(packet)([dataclasses.replace(report, data=scan_response) if is_scan_response(report)
                                       else report for report in packet.reports])
            send(packet)

        self.send_hci_packet = send_with_scan_response
        try:
            on_pdu(self, pdu)
        finally:
            del self.send_hci_packet

    Controller.send_advertising_pdu = send_advertising_pdu
    Controller.on_advertising_pdu = on_advertising_pdu


class SplitSink:
    """Writes each packet as its first byte and, `pause` seconds later, the rest, in order."""

    def __init__(self, sink, pause):
        self.sink, self.pause, self.queue = sink, pause, asyncio.Queue()
        self.task = asyncio.get_running_loop().create_task(self.run())

    def on_packet(self, packet):
        self.queue.put_nowait(bytes(packet))

    async def run(self):
        while True:
            packet = await self.queue.get()
            self.sink.on_packet(packet[:1])
            await asyncio.sleep(self.pause)
            self.sink.on_packet(packet[1:])


async def main(count, extra, fixed_ports=(), split=0.0):
    link = LocalLink()
    keep, ports = [], []
    for index in range(count):
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", fixed_ports[index] if index < len(fixed_ports) else 0))
        ports.append(sock.getsockname()[1])
        # Accepted sockets inherit TCP_NODELAY (asyncio sets it only on IPPROTO_TCP
        # sockets, not on this proto-0 one): without it Nagle + delayed ACK add
        # ~40 ms to every ATT round trip through the virtual controllers.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        transport = await open_tcp_server_transport_with_socket(sock)
        sink = SplitSink(transport.sink, split) if split and index == 0 else transport.sink
        keep.append((transport, Controller(f"C{index}", host_source=transport.source, host_sink=sink, link=link)))
    for index, spec in enumerate(extra):
        transport = await open_transport(spec)
        keep.append((transport, Controller(f"X{index}", host_source=transport.source, host_sink=transport.sink,
                                           link=link)))
    print("PORTS", *ports, flush=True)
    await asyncio.get_running_loop().create_future()


def parse(argv):
    """[N] [TRANSPORT…] [--split S] [--ports P…] → (count, transports, ports, split); N defaults to
    the number of ports given, else 2."""
    ports, split = [], 0.0
    if "--split" in argv:
        at = argv.index("--split")
        split = float(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    if "--ports" in argv:
        at = argv.index("--ports")
        ports = [int(p) for p in argv[at + 1:]]
        argv = argv[:at]
    count = int(argv[0]) if argv else (len(ports) or 2)
    if ports and len(ports) != count:
        sys.exit(f"controllers.py: {count} controllers but {len(ports)} ports given")
    return count, argv[1:], ports, split


if __name__ == "__main__":
    send_real_scan_responses()
    count, extra, ports, split = parse(sys.argv[1:])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        asyncio.run(main(count, extra, ports, split))
    except KeyboardInterrupt:
        sys.exit(130)
    except OSError as error:  # e.g. a --ports port in use
        sys.exit(f"controllers.py: {error}")
