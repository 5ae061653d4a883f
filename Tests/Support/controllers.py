"""Starts N Bumble virtual controllers on one LocalLink, each an H4 tcp-server on
a free loopback port (bound to port 0, so no race), plus one controller per
extra Bumble transport given (e.g. pty:/tmp/x/tty for the serial transport),
prints "PORTS p1 … pN" and runs until killed.
Usage: python Tests/Support/controllers.py [N=2] [TRANSPORT…]"""
import asyncio
import socket
import sys

from bumble.controller import Controller
from bumble.link import LocalLink
from bumble.transport import open_transport
from bumble.transport.tcp_server import open_tcp_server_transport_with_socket


async def main(count, extra):
    link = LocalLink()
    keep, ports = [], []
    for index in range(count):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        ports.append(sock.getsockname()[1])
        transport = await open_tcp_server_transport_with_socket(sock)
        keep.append((transport, Controller(f"C{index}", host_source=transport.source, host_sink=transport.sink,
                                           link=link)))
    for index, spec in enumerate(extra):
        transport = await open_transport(spec)
        keep.append((transport, Controller(f"X{index}", host_source=transport.source, host_sink=transport.sink,
                                           link=link)))
    print("PORTS", *ports, flush=True)
    await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2, sys.argv[2:]))
