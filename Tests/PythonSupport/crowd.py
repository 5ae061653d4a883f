"""A crowded hall: N Bumble 8-Balls advertising at once from one process, one
per controller port given ("Crowd 01" … at C0:00:00:00:00:01 …). They
advertise only (a central that connects finds the service, nothing more).
Prints READY once all advertise; runs until killed.
Usage: python Tests/PythonSupport/crowd.py PORT…"""
import asyncio
import sys

from bumble.core import AdvertisingData, UUID
from bumble.device import Device
from bumble.gatt import Service
from bumble.hci import Address
from bumble.transport import open_transport

SERVICE = UUID("8E38140A-27BE-4090-8955-4FC4B5698D1E")


async def advertise(port, number, ready):
    async with await open_transport(f"tcp-client:127.0.0.1:{port}") as transport:
        name = f"Crowd {number:02d}"
        device = Device.with_hci(name, Address(f"C0:00:00:00:00:{number:02X}"), transport.source, transport.sink)
        device.add_service(Service(SERVICE, []))
        device.advertising_data = bytes(AdvertisingData([
            (AdvertisingData.FLAGS, bytes([0x06])),
            (AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS, bytes(SERVICE)),
            (AdvertisingData.COMPLETE_LOCAL_NAME, name.encode()),
        ]))
        await device.power_on()
        await device.start_advertising(auto_restart=True)
        ready.release()
        await asyncio.get_running_loop().create_future()


async def main(ports):
    ready = asyncio.Semaphore(0)
    tasks = [asyncio.create_task(advertise(port, i + 1, ready)) for i, port in enumerate(ports)]
    for _ in ports:
        await ready.acquire()
    print("READY", flush=True)
    await asyncio.gather(*tasks)


if __name__ == "__main__":
    asyncio.run(main([int(p) for p in sys.argv[1:]]))
