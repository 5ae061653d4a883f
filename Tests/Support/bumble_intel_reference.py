"""The reference host for the Intel tests: Bumble's own Intel driver
(bumble.drivers.intel, forced with the 'driver' metadata) brings up the
controller at tcp-client:127.0.0.1:PORT, loading ibt-*.sfi/.ddc from
$BUMBLE_INTEL_FIRMWARE_DIR (the intel/ folder), then Bumble's host initialises
it. Prints "DONE" and exits 0 when the host is up.
Usage: BUMBLE_INTEL_FIRMWARE_DIR=DIR python bumble_intel_reference.py PORT"""
import asyncio
import sys

from bumble.host import Host
from bumble.transport import open_transport


async def main(port):
    async with await open_transport(f"tcp-client:127.0.0.1:{port}") as transport:
        host = Host(transport.source, transport.sink)
        host.hci_metadata = {"driver": "intel"}
        await asyncio.wait_for(host.reset(), 60)
        print("DONE", flush=True)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
