"""Pressure on the transmit queue over the bus: Tests/Interop/test_pressure.py's second scenario
through the emulated dongle in the QEMU guest. Its own guest and link: five
controllers (the dongle's and four centrals') that announce 4 LE ACL buffers
each, so the program waits for Number Of Completed Packets and its transmit
queue fills, as over TCP; with Bumble's 64 buffers the emulated bus (a Python
gadget under TCG, about 80 PDUs a second each way) throttles the requests
before they reach the host, and the queue never fills (the same test passed
on the binary before the fix; 2026-11-26)."""
import asyncio

import pytest
import pressure
from fixture import Link
from test_usb import assert_btusb_back, start

ACL_PACKETS = 4


@pytest.fixture(scope="module")
def link():
    c = Link(5, options=["--acl-packets", str(ACL_PACKETS)])
    yield c
    c.stop()


def test_three_legal_centrals_beside_one_pipelining_over_usb(guest, link, capsys):
    """Three legal centrals (each an ATT request, a Pairing Request and an LE
    credit-based connection request in flight, the 248-byte Device Name read in
    blobs) beside one that pipelines bursts of Read Requests, with the default
    4 centrals: every legal request answered (within 20 s), the program alive
    and exiting 0 on SIGTERM within its stop grace (timed in the guest)."""
    name = pressure.long_name("usb")
    start(guest, "pressure", f"--role peripheral --transport usb --name {name}")
    try:
        guest.wait_for_file_text("pressure.log", "info: advertising", timeout=40)
        assert f"x {ACL_PACKETS}" in guest.file("pressure.log"), guest.file("pressure.log")
        # 20 s, not TCP's 10, for a legal request: under TCG with the host's load
        # average at 6-8, long reads waited up to 6.9 s (2.1 s with the cores quiet; 2026-11-26).
        scenario = pressure.run(link.ports[1:], name, 3, 10, pipeliner=True, limit=20)
        tally, (responses, requests) = asyncio.run(asyncio.wait_for(scenario, 120))
        alive = not guest.file("pressure.rc").strip()
        # SIGTERM, then the exit code file (written as the program ends), timed in the guest.
        out = guest.check("t0=$(cut -d' ' -f1 /proc/uptime); pkill -TERM -x itcb-dongle; for i in $(seq 400); do"
                          " [ -s pressure.rc ] && break; sleep 0.02; done; t1=$(cut -d' ' -f1 /proc/uptime);"
                          " echo SIGTERM-at $t0 $t1 $(cat pressure.rc)")
        t0, t1, *code = out.split("SIGTERM-at ", 1)[1].split()
        stopped = float(t1) - float(t0)
        line = (f"{tally.report()}; pipelining central: {responses} responses to {requests} Read Requests;"
                f" exit {code[0] if code else 'none'} {stopped * 1000:.0f} ms after SIGTERM")
        with capsys.disabled():
            print(f"\n  pressure over USB (3 legal + 1 pipelining, 10 s, {ACL_PACKETS} ACL buffers): {line}")
        log = guest.file("pressure.log")[-3000:]
        assert not tally.lost, "legal requests lost:\n" + "\n".join(tally.lost) + f"\n{line}\n{log}"
        # The orderly stop waits for the controller to confirm the disconnections, up to
        # the driver's stop grace (0.9 s); through this gadget a command's round trip is slow
        # (660 ms to stop with four idle links, 0.6-2.4 s just after pressure at load
        # averages up to 8, 5.2 s beside stress-ng; 2026-11-26): the time is printed above and
        # bounded only as a hang (30 s); a program that never stops still fails.
        assert alive and code == ["0"] and stopped <= 30.0, f"{line}\n{log}"
    finally:
        guest.run("pkill -KILL -x itcb-dongle; true")
    assert_btusb_back(guest, "pressure")
