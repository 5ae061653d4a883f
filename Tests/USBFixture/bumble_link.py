"""Bumble virtual controllers for the USB fixture: N controllers on one
LocalLink, each an H4 tcp-server on a free loopback port (bound to port 0).
Controller 0 sits behind the guest's emulated dongle (QEMU connects to it);
the others carry Bumble peers on the host.

Every controller announces 251-byte LE ACL buffers (Bumble's default is 27), so
hosts send full-size fragments and ACL packets over the emulated USB bus are
longer than the bulk endpoints' 64-byte max packet size; that is what exercises
the splitting of ACL into several bulk packets and the zero-length packets.

Prints "PORTS p0 p1 …" and runs until killed. With --ports it listens on the
given ports instead (a restarted link, to which QEMU reconnects).

--connection-address: LE data is sent from the address the sender's side of the
connection has (Bumble's link uses the controller's LE random address, which a
controller advertising with an extended advertising set's own address — Linux
with BlueZ — may never have set: its peer then drops all its data).
--acl-packets N: the LE ACL buffers each controller announces (Bumble's default
64); few make a host wait for Number Of Completed Packets, so its transmit
queue fills (Tests/USBFixture/test_pressure_usb.py).
Usage: python Tests/USBFixture/bumble_link.py [--acl-length 251] [--acl-packets 64] [--ports P0,P1,…]
                                              [--connection-address] [N=3]"""
import argparse
import asyncio
import socket

from bumble.controller import Controller
from bumble.core import PhysicalTransport
from bumble.link import LocalLink


class ConnectionAddressLink(LocalLink):
    def send_acl_data(self, sender_controller, destination_address, transport, data):
        if transport == PhysicalTransport.LE:
            connection = sender_controller.le_connections.get(destination_address)
            destination = self.find_le_controller(destination_address)
            if connection is not None and destination is not None and connection.self_address is not None:
                source = connection.self_address
                asyncio.get_running_loop().call_soon(
                    lambda: destination.on_link_acl_data(source, transport, data))
                return
        super().send_acl_data(sender_controller, destination_address, transport, data)
from bumble.transport.tcp_server import open_tcp_server_transport_with_socket


async def main(count, acl_length, wanted_ports, connection_address=False, acl_packets=None):
    link = ConnectionAddressLink() if connection_address else LocalLink()
    keep, ports = [], []
    for index in range(count):
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", wanted_ports[index] if wanted_ports else 0))
        ports.append(sock.getsockname()[1])
        transport = await open_tcp_server_transport_with_socket(sock)
        controller = Controller(f"U{index}", host_source=transport.source, host_sink=transport.sink, link=link)
        controller.le_acl_data_packet_length = acl_length
        controller.acl_data_packet_length = acl_length
        if acl_packets:
            controller.total_num_le_acl_data_packets = acl_packets
        keep.append((transport, controller))
    print("PORTS", *ports, flush=True)
    await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("count", nargs="?", type=int, default=3)
    parser.add_argument("--acl-length", type=int, default=251)
    parser.add_argument("--acl-packets", type=int, default=None)
    parser.add_argument("--ports", default="")
    parser.add_argument("--connection-address", action="store_true")
    args = parser.parse_args()
    ports = [int(p) for p in args.ports.split(",") if p]
    asyncio.run(main(len(ports) or args.count, args.acl_length, ports, args.connection_address, args.acl_packets))
