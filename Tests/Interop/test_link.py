"""The link our peripheral asks for (LinkTuning.swift, docs/PERFORMANCE.md "On
the air"): 15-30 ms by default, `--connection-interval` to change it or turn it
off, as the Bumble central's controller reports it. Bumble's controller has
the link layer's Connection Parameters Request procedure, so the request goes
through LE Connection Update; it refuses LE Set Data Length and LE Set PHY
(Unknown HCI Command), which our peripheral takes quietly (the RootCanal suite
shows them granted)."""
import asyncio

import pytest
from bumble_client import EightBall, central
from harness import SLUGS


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 120))


async def interval_after_connecting(port, name, settle=3.0):
    """The connection interval (ms) the central's controller reports once the
    peripheral had time to ask, and an answer asked over that link."""
    async with central(port) as device:
        ball = await EightBall.connect(device, name)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + settle
        start = ball.connection.parameters.connection_interval
        while loop.time() < deadline and ball.connection.parameters.connection_interval == start:
            await asyncio.sleep(0.05)
        answer = await ball.ask("Fast enough?")
        await ball.disconnect()
        return start, ball.connection.parameters.connection_interval, answer


pytestmark = pytest.mark.ours_only


def test_peripheral_asks_for_15_to_30_ms(link, peripheral):
    dongle = peripheral("Fast8")
    start, interval, answer = run(interval_after_connecting(link.ports[1], "Fast8"))
    assert answer.decode() in SLUGS
    assert 15 <= interval <= 30, f"interval {interval} ms (was {start} ms at connection)"
    dongle.wait_for("parameters: interval 30.0 ms, latency 0, timeout 4000 ms")
    # Bumble's controller refuses the optional steps: a debug line, never a warning.
    assert "warning" not in dongle.log


def test_connection_interval_option_and_off(link, peripheral):
    dongle = peripheral("Slow8", "--connection-interval", "40-60")
    _, interval, _ = run(interval_after_connecting(link.ports[1], "Slow8"))
    assert 40 <= interval <= 60, interval
    dongle.stop_cleanly()


def test_connection_interval_off_keeps_the_centrals(link, peripheral):
    peripheral("Keep8", "--connection-interval", "off")
    start, interval, _ = run(interval_after_connecting(link.ports[1], "Keep8", settle=1.5))
    assert interval == start
