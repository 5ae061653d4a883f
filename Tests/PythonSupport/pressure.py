"""Pressure on the peripheral's transmit queue: Bumble centrals that
each keep one ATT request, one SMP Pairing Request and one L2CAP LE
credit-based connection request in flight at once, for a while, beside (if
asked) one central that pipelines Read Requests without waiting for their
responses (an ATT protocol violation). Every legal request must be answered
within LIMIT seconds (or the run's own limit); the longest wait of each kind
is returned for the report. Used over TCP (Tests/Interop/test_pressure.py) and
over USB in the QEMU guest (Tests/USBFixture/test_pressure_usb.py)."""
import asyncio
import contextlib
import logging
import time

from bumble.core import ProtocolError
from bumble.l2cap import LeCreditBasedChannelSpec
from bumble_client import EightBall, central, find

LIMIT = 10.0  # a legal request unanswered this long is lost (Bumble's own ATT timeout is 30 s)
PIPELINED = 35  # Read Requests in each burst of the pipelining central
LONG_NAME_PREFIX = "Pressure8-"


def long_name(tag):
    """A Device Name of the 248-byte maximum: its read is a Read Request and 11 Read Blob Requests at ATT_MTU 23."""
    return (LONG_NAME_PREFIX + tag + "-").ljust(248, "n")


class Tally:
    """Answered requests and longest waits per kind; the lost ones (a central's loop stops at its first)."""

    def __init__(self, limit=LIMIT):
        self.limit = limit
        self.answered, self.longest, self.lost = {}, {}, []

    async def timed(self, who, kind, awaitable):
        start = time.monotonic()
        try:
            result = await asyncio.wait_for(awaitable, self.limit)
        except asyncio.TimeoutError:
            self.lost.append(f"{who}: {kind} unanswered after {self.limit:.0f} s (at {time.strftime('%H:%M:%S')})")
            raise
        waited = time.monotonic() - start
        self.answered[kind] = self.answered.get(kind, 0) + 1
        self.longest[kind] = max(self.longest.get(kind, 0.0), waited)
        return result

    def report(self):
        kinds = ", ".join(f"{kind} {self.answered[kind]} (longest {self.longest[kind] * 1000:.0f} ms)"
                          for kind in sorted(self.answered))
        return f"answered: {kinds or 'nothing'}; lost: {len(self.lost)}"


async def refused(awaitable):
    """The peer's refusal (Pairing Failed, an L2CAP connection refused) is the answer awaited."""
    try:
        await awaitable
    except ProtocolError as error:
        return error
    raise AssertionError("expected a refusal, got success")


async def legal(tally, who, ball, name, deadline):
    """One legal central: a loop of questions and Device Name reads (one ATT
    request at a time), a loop of Pairing Requests and a loop of LE
    credit-based connection requests, side by side until `deadline`."""
    device_name = await ball.device_name()
    await ball.subscribe()
    connection = ball.connection

    async def att():
        n = 0
        while time.monotonic() < deadline:
            answer = await tally.timed(who, "question+answer", ball.ask(f"{who} question {n}?"))
            assert answer, f"{who}: empty answer"
            value = await tally.timed(who, "device name (long read)", device_name.read_value())
            assert bytes(value) == name.encode(), f"{who}: Device Name read as {bytes(value)[:40]!r}…"
            n += 1

    async def smp():
        while time.monotonic() < deadline:
            error = await tally.timed(who, "pairing request", refused(connection.pair()))
            assert error.error_namespace == "smp", error

    async def l2cap():
        psm = 0x0081
        while time.monotonic() < deadline:
            await tally.timed(who, "LE credit-based connection", refused(
                connection.create_l2cap_channel(LeCreditBasedChannelSpec(psm=psm))))

    await asyncio.gather(att(), smp(), l2cap())


async def pipelining(ball, deadline, counter, pause):
    """The misbehaving central: bursts of PIPELINED raw Read Requests of the
    Device Name, none waiting for a response, `pause` seconds apart, until
    `deadline` or until the peripheral drops the link (it may: the central
    breaks the protocol)."""
    handle = (await ball.device_name()).handle
    request = bytes([0x0A, handle & 0xFF, handle >> 8])  # ATT Read Request
    # Bumble's client sees responses to requests it never made; it warns and drops them: count them.
    bearer = ball.peer.gatt_client
    on_pdu = bearer.on_gatt_pdu

    def count(pdu):
        if pdu.op_code == 0x0B:
            counter[0] += 1
        on_pdu(pdu)

    bearer.on_gatt_pdu = count
    gone = asyncio.Event()
    ball.connection.once("disconnection", lambda *_: gone.set())
    while time.monotonic() < deadline and not gone.is_set():
        for _ in range(PIPELINED):
            ball.connection.send_l2cap_pdu(4, request)
        counter[1] += PIPELINED
        await asyncio.sleep(pause)


async def run(ports, name, legal_count, seconds, pipeliner=False, pause=0.5, limit=LIMIT):
    """Centrals on Bumble controllers `ports` (one each) against the peripheral
    advertising `name` (long: found by its shortened name): `legal_count` legal
    ones and, if `pipeliner`, one more that pipelines a burst every `pause`
    seconds; a legal request unanswered `limit` seconds is lost. Returns the
    Tally and (responses, requests) of the pipelining central."""
    tally = Tally(limit)
    counter = [0, 0]
    # Thousands of refusals and unexpected responses are the scenario, not news:
    # Bumble would log each (with a traceback for every refused L2CAP connection).
    for logger in ("bumble.l2cap", "bumble.smp", "bumble.gatt_client"):
        logging.getLogger(logger).setLevel(logging.CRITICAL)
    needed = legal_count + (1 if pipeliner else 0)
    assert len(ports) >= needed, f"{needed} centrals need {needed} controllers, got {len(ports)}"
    async with contextlib.AsyncExitStack() as stack:
        devices = [await stack.enter_async_context(central(port, f"F1:F2:F3:F4:{0xC0 + i:02X}:C6"))
                   for i, port in enumerate(ports[:needed])]
        address = (await find(devices[0], name, prefix=True)).address
        # One at a time: a virtual controller connects on the next advertising
        # PDU, and the peripheral advertises again after each connection.
        connections = [await asyncio.wait_for(device.connect(address), 15) for device in devices]
        balls = await asyncio.gather(*(EightBall.discover(c) for c in connections))
        deadline = time.monotonic() + seconds
        work = [legal(tally, f"central {i + 1}", ball, name, deadline) for i, ball in enumerate(balls[:legal_count])]
        if pipeliner:
            work.append(pipelining(balls[-1], deadline, counter, pause))
        results = await asyncio.gather(*work, return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException) and not isinstance(r, asyncio.TimeoutError)]
        if errors:
            raise errors[0]
    return tally, tuple(counter)
