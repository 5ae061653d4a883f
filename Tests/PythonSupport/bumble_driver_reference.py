"""The reference host for the vendor firmware tests: one of Bumble's own drivers
(bumble.drivers.rtk or .intel, forced with the 'driver' metadata) brings up the
controller at tcp-client:127.0.0.1:PORT, loading the files from
$BUMBLE_RTK_FIRMWARE_DIR (rtl_bt/) or $BUMBLE_INTEL_FIRMWARE_DIR (intel/), then
Bumble's host initialises it. Prints "DONE" and exits 0 when the host is up.
Usage: python bumble_driver_reference.py rtk|intel PORT"""
import asyncio
import sys

from bumble.host import Host
from bumble.transport import open_transport


async def main(driver, port):
    async with await open_transport(f"tcp-client:127.0.0.1:{port}") as transport:
        host = Host(transport.source, transport.sink)
        host.hci_metadata = {"driver": driver}
        await asyncio.wait_for(host.reset(), 60)
        print("DONE", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
