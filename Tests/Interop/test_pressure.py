"""The transmit queue under pressure: legal centrals each
keeping an ATT request, an SMP Pairing Request and an L2CAP LE credit-based
connection request in flight, reading a 248-byte Device Name (Read Blobs) and
asking questions, with and without a central that pipelines Read Requests.
Every legal request must be answered (Tests/PythonSupport/pressure.py, 10 s each),
the peripheral must still run at the end and exit 0 within 1 s of SIGTERM.
The longest waits are printed with the test's result."""
import asyncio
import subprocess
import time

import pytest
import pressure
from harness import Controllers

# Our binary only: the Bumble 8-Ball takes no 248-byte name (its advertising
# data overflows), no --max-centrals, and SMP refusal is ours (README.md).
pytestmark = pytest.mark.ours_only


@pytest.fixture
def link():
    """Nine Bumble controllers on one link: the peripheral's and eight centrals'."""
    c = Controllers(9)
    yield c
    c.stop()


def stop_time(dongle):
    """Seconds from SIGTERM to exit 0, None if the peripheral had died or did not exit 0 within 1 s."""
    if dongle.process.poll() is not None:
        return None
    stopping = time.monotonic()
    dongle.process.terminate()
    try:
        code = dongle.process.wait(1.0)
    except subprocess.TimeoutExpired:
        return None
    return time.monotonic() - stopping if code == 0 else None


def pressure_test(capsys, link, peripheral, tag, legal, seconds, pipeliner, *flags):
    name = pressure.long_name(tag)
    # At the default level: a debug line per ATT PDU would be most of the work measured.
    dongle = peripheral(name, "--log-level", "info", *flags)
    scenario = pressure.run(link.ports[1:], name, legal, seconds, pipeliner)
    tally, (responses, requests) = asyncio.run(asyncio.wait_for(scenario, seconds + 60))
    alive = dongle.process.poll() is None
    stopped = stop_time(dongle) if dongle.ours else 0.0
    line = tally.report()
    if pipeliner:
        line += f"; pipelining central: {responses} responses to {requests} Read Requests"
    line += (f"; stopped {stopped * 1000:.0f} ms after SIGTERM" if stopped is not None
             else "; still running 1 s after SIGTERM" if alive else f"; died ({dongle.process.returncode})")
    with capsys.disabled():
        print(f"\n  pressure ({legal} legal{' + 1 pipelining' if pipeliner else ''}, {seconds} s): {line}")
    assert not tally.lost, "legal requests lost:\n" + "\n".join(tally.lost) + f"\n{line}"
    assert alive and stopped is not None, line


def test_eight_legal_centrals_for_twenty_seconds(capsys, link, peripheral):
    pressure_test(capsys, link, peripheral, "eight", 8, 20, False, "--max-centrals", "8")


def test_three_legal_centrals_beside_one_pipelining(capsys, link, peripheral):
    pressure_test(capsys, link, peripheral, "pipe", 3, 10, True)
