"""A Bumble GATT client that plays the ITCB central against an 8-Ball, with every
step under a timeout so a broken peer fails the test instead of hanging it."""
import asyncio
import contextlib

from bumble.device import Device, Peer
from bumble.core import UUID
from bumble.hci import Address
from bumble.transport import open_transport

SERVICE = "8E38140A-27BE-4090-8955-4FC4B5698D1E"
QUESTION = "BDD37D7A-F66A-47B9-A49C-FE29FD235A77"
ANSWER = "349A0D7B-6215-4E2C-A095-AF078D737445"
GAP_SERVICE = UUID.from_16_bits(0x1800)
DEVICE_NAME = UUID.from_16_bits(0x2A00)
STEP = 15.0


def names_in(advertisement):
    return [bytes(v) for t, v in advertisement.data.ad_structures if t in (0x08, 0x09)]


@contextlib.asynccontextmanager
async def central(port, address="F1:F2:F3:F4:F5:C6"):
    """A powered-on Bumble device on the virtual controller at `port`."""
    async with await open_transport(f"tcp-client:127.0.0.1:{port}") as transport:
        device = Device.with_hci("asker", Address(address), transport.source, transport.sink)
        await asyncio.wait_for(device.power_on(), STEP)
        yield device


async def find(device, name, timeout=STEP, prefix=False):
    """The advertisement of the 8-Ball called `name` (legacy or extended report);
    prefix=True also takes a shortened name that `name` starts with (a long name)."""
    found = asyncio.get_running_loop().create_future()

    def matches(advertised):
        return advertised == name.encode() or (prefix and name.encode().startswith(advertised))

    def on_advertisement(advertisement):
        if any(matches(n) for n in names_in(advertisement)) and not found.done():
            found.set_result(advertisement)

    device.on("advertisement", on_advertisement)
    await device.start_scanning(filter_duplicates=False)
    try:
        return await asyncio.wait_for(found, timeout)
    finally:
        device.remove_listener("advertisement", on_advertisement)
        await device.stop_scanning()


class EightBall:
    """A connection to an 8-Ball with its Question/Answer characteristics found."""

    def __init__(self, connection, peer, question, answer):
        self.connection, self.peer, self.question, self.answer = connection, peer, question, answer
        self.answers = asyncio.Queue()
        self.subscribed = False

    @classmethod
    async def connect(cls, device, name, mtu=None):
        advertisement = await find(device, name)
        connection = await asyncio.wait_for(device.connect(advertisement.address), STEP)
        return await cls.discover(connection, mtu)

    @classmethod
    async def discover(cls, connection, mtu=None):
        """The 8-Ball on an open `connection`: MTU exchange (if `mtu`), then discovery."""
        peer = Peer(connection)
        if mtu:
            await asyncio.wait_for(peer.request_mtu(mtu), STEP)
        await asyncio.wait_for(peer.discover_services(), STEP)
        services = peer.get_services_by_uuid(SERVICE)
        assert services, "no 8-Ball service"
        await asyncio.wait_for(services[0].discover_characteristics(), STEP)
        question = services[0].get_characteristics_by_uuid(QUESTION)[0]
        answer = services[0].get_characteristics_by_uuid(ANSWER)[0]
        return cls(connection, peer, question, answer)

    async def subscribe(self):
        await asyncio.wait_for(self.answer.subscribe(lambda value: self.answers.put_nowait(bytes(value))), STEP)
        self.subscribed = True

    async def write(self, text):
        data = text if isinstance(text, bytes) else text.encode()
        await asyncio.wait_for(self.question.write_value(data, with_response=True), STEP)

    async def next_answer(self, timeout=STEP):
        return await asyncio.wait_for(self.answers.get(), timeout)

    async def ask(self, text):
        if not self.subscribed:
            await self.subscribe()
        await self.write(text)
        return await self.next_answer()

    async def device_name(self):
        """The GAP Device Name characteristic (0x2A00) of the discovered services."""
        gap = [s for s in self.peer.services if s.uuid == GAP_SERVICE]
        assert gap, "no GAP service"
        await asyncio.wait_for(gap[0].discover_characteristics(), STEP)
        return gap[0].get_characteristics_by_uuid(DEVICE_NAME)[0]

    async def read_answer(self):
        return bytes(await asyncio.wait_for(self.answer.read_value(), STEP))

    async def disconnect(self):
        await asyncio.wait_for(self.connection.disconnect(), STEP)
