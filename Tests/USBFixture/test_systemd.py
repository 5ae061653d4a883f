"""The whole appliance under systemd as PID 1 in the guest plugging
the configured dongle starts itcb-dongle@1-1.service through the udev rule, the
hardened Type=notify unit becomes active (READY=1 after advertising), answers a
Bumble central, and pulling the dongle makes the unit inactive; plugging it in
again starts it again. The unit's metrics: its file in its
state directory, linked into node_exporter's textfile directory and readable
there by another user, and the status line, both counting the question."""
import asyncio
import time

import pytest
from bumble_client import EightBall, central
from fixture import Guest
from harness import Controllers, SLUGS


@pytest.fixture(scope="module")
def system():
    link = Controllers(2)
    # --trace: every packet in gadget.log (a few hundred lines here), for a failure that depends on timing.
    guest = Guest(link.ports[0], systemd=True, boot_timeout=180, gadget_options="--trace")
    yield guest, link
    guest.stop()
    link.stop()


def unit_state(guest):
    return guest.run("systemctl is-active itcb-dongle@1-1.service; true")[1].strip()


def wait_state(guest, wanted, timeout=60):
    deadline = time.time() + timeout
    state = ""
    while time.time() < deadline:
        state = unit_state(guest)
        if state == wanted:
            return
        time.sleep(1)
    _, status = guest.run("systemctl status itcb-dongle@1-1.service --no-pager -l; journalctl -u 'itcb-dongle@*'"
                          " --no-pager -n 40; true")
    raise AssertionError(f"unit is {state!r}, not {wanted!r}:\n{status}")


def test_plug_starts_hardened_unit_and_unplug_stops_it(system):
    guest, link = system
    wait_state(guest, "active")
    _, status = guest.run("systemctl show -p StatusText -p User -p MainPID itcb-dongle@1-1.service;"
                          " ps -o user,comm | grep itcb-dongle; true")
    # "advertising" at READY=1; from the first 15-s report on (a slow guest may get
    # there before this line), the counts, which say the same with nothing asked yet.
    assert ("StatusText=advertising" in status or "StatusText=0 central(s) connected (0 in all), 0 question(s) answered"
            in status) and "User=itcb" in status, status

    async def ask():
        async with central(link.ports[1]) as device:
            ball = await EightBall.connect(device, "Unit8")
            return await ball.ask("Running under systemd?")

    assert asyncio.run(asyncio.wait_for(ask(), 60)).decode() in SLUGS
    # Within one period (15 s) of the answer: the file, through the link, as nobody.
    metrics = guest.check(
        "link=/var/lib/prometheus/node-exporter/itcb-dongle-1-1.prom; readlink $link; stat -L -c %a $link;"
        " for i in $(seq 40); do setpriv --reuid=65534 --regid=65534 --clear-groups cat $link"
        " | grep -q '^itcb_dongle_questions_answered_total{transport=\"usb:1-1\"} 1$' && break; sleep 0.5; done;"
        " setpriv --reuid=65534 --regid=65534 --clear-groups cat $link; systemctl show -p StatusText itcb-dongle@1-1.service",
        timeout=60)
    assert metrics.startswith("/var/lib/itcb-dongle/1-1.prom\n644\n"), metrics
    assert 'itcb_dongle_questions_answered_total{transport="usb:1-1"} 1\n' in metrics, metrics
    assert "StatusText=1 central(s) connected (1 in all), 1 question(s) answered" in metrics \
        or "StatusText=0 central(s) connected (1 in all), 1 question(s) answered" in metrics, metrics
    guest.run("kill -USR1 $(cat /run/gadget.pid)")
    wait_state(guest, "inactive")
    guest.run("kill -USR2 $(cat /run/gadget.pid)")
    wait_state(guest, "active")


def test_a_central_instance_ends_with_its_outcome_and_is_not_restarted(system):
    """A central kiosk asks once per start: with no 8-Ball on the air it ends
    with 6 (no 8-Ball found), which the unit does not restart (nor 5 and 7)."""
    guest, _ = system
    unit = "itcb-dongle@1-1.service"
    wait_state(guest, "active")
    guest.check("printf 'ITCB_ROLE=central\\nITCB_QUESTION=\"Anyone there?\"\\nITCB_EXTRA_ARGS=--timeout 3\\n'"
                f" > /etc/itcb-dongle/1-1.conf; systemctl restart {unit}")
    try:
        wait_state(guest, "failed", timeout=60)
        time.sleep(6)  # three times RestartSec: a restart would have come
        _, shown = guest.run(f"systemctl show -p ExecMainStatus -p NRestarts -p ActiveState {unit}; true")
        assert "ExecMainStatus=6" in shown and "NRestarts=0" in shown and "ActiveState=failed" in shown, shown
    finally:
        guest.run(f"rm -f /etc/itcb-dongle/1-1.conf; systemctl reset-failed {unit}; systemctl start {unit}; true")
    wait_state(guest, "active")
