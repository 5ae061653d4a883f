"""A wedged dongle brought back without a hand on it, under
systemd as PID 1 in the guest with the package's rule and unit (WatchdogSec=10:
the program probes the controller every 5 s). Three emulated dongles:

- silent until its port is reset (gadget file `silent-until-port-reset`):
  the probe goes unanswered, HCI Reset goes unanswered, the USB port reset and
  a fresh bring-up bring it back, in the same process;
- dead (`swallow-commands`): the same two steps, then exit 4; systemd restarts
  the unit, each start waiting longer (5 s, then 10 s) before touching the
  dongle; once the dongle answers again the next start advertises;
- silent until it re-enumerates (`silent-until-reenumerated`): the port reset
  makes it leave the bus and come back as a new device a second later; the
  program waits for it at the same port and brings it up, in the same process (last).

Each prints the time from the controller going silent (or, for the dead one,
answering again) to advertising again, and the unit's journal lines."""
import asyncio
import os
import re
import time

from bumble_client import EightBall, central
from harness import SLUGS

UNIT = "itcb-dongle@1-1.service"
RUNG1 = "; resetting it"  # after "controller did not answer HCI command <the probe>"
RUNG2 = "did not answer after its HCI Reset either; resetting its USB port and bringing it up afresh"
RUNG3 = "still silent after an HCI Reset and a USB port reset; exiting with code 4"


# The systemd guest of test_systemd.py (its own, this module's: module scope).
from test_systemd import system  # noqa: E402,F401


def journal(guest):
    """The unit's journal (the program's lines and systemd's), one line each."""
    return guest.run(f"journalctl -u {UNIT} -o short-monotonic --no-pager; true")[1].splitlines()


def main_pid(guest):
    return guest.run(f"systemctl show -p MainPID --value {UNIT}; true")[1].strip()


def wait_active(guest, timeout=90):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if guest.run(f"systemctl is-active {UNIT}; true")[1].strip() == "active":
            return
        time.sleep(1)
    raise AssertionError("unit not active:\n" + "\n".join(journal(guest)[-40:]))


def wait_line(guest, text, start, timeout, count=1):
    """Waits until the journal lines after `start` hold `text` `count` times; returns them."""
    deadline = time.time() + timeout
    lines = []
    while time.time() < deadline:
        lines = journal(guest)[start:]
        if sum(text in line for line in lines) >= count:
            return lines
        time.sleep(0.5)
    raise AssertionError(f"{text!r} not in the journal within {timeout} s:\n" + "\n".join(lines[-60:]))


def ask(link):
    async def scenario():
        async with central(link.ports[1]) as device:
            ball = await EightBall.connect(device, "Unit8")
            answer = await ball.ask("Back again?")
            await ball.disconnect()
            return answer

    return asyncio.run(asyncio.wait_for(scenario(), 60)).decode()


def after(lines, text):
    """The lines after the first that holds `text`."""
    index = next(i for i, line in enumerate(lines) if text in line)
    return lines[index + 1:]


def report(capsys, what, seconds, lines):
    with capsys.disabled():
        print(f"\n{what}: advertising again {seconds:.1f} s later; journal:")
        for line in lines:
            print("    " + line)


def stamp(line):
    """The guest's monotonic time of a journal or kernel log line ("[   72.961689] ...")."""
    return float(line.split("]", 1)[0].strip("[ "))


def in_guest(guest, label, command):
    """Runs `command` in the guest right after a kernel log mark; returns the mark's time."""
    guest.check(f"mark {label}; {command}")
    return stamp(next(line for line in guest.check("dmesg").splitlines() if line.endswith(f"usb-fixture: {label}")))


def silenced_and_back(guest, flag):
    """Creates the gadget's fault file (in the guest, so that the time is the
    guest's, as the journal's is); returns (journal position, silenced at)."""
    wait_active(guest)
    start = len(journal(guest))
    return start, in_guest(guest, f"silence-{flag}", f": > {flag}")


def advertising_after(lines, since):
    """The guest time from `since` to the first advertising line after it."""
    return next(stamp(line) for line in lines if "info: advertising" in line and stamp(line) > since) - since


def port_resets_so_far(guest):
    """The process's count of USB port resets, from the status line SIGHUP asks for (none shown: 0)."""
    start = len(journal(guest))
    guest.check(f"systemctl kill -s HUP {UNIT}")
    status = [line for line in wait_line(guest, "status:", start, timeout=15) if "status:" in line][-1]
    counted = re.search(r"(\d+) USB port resets", status)
    return int(counted.group(1)) if counted else 0


def comes_back_in_the_same_process(system, capsys, flag, what, limit):
    """The gadget goes silent (`flag`); the probe's timeout and the HCI Reset's
    make the program reset the port, which brings the dongle back: advertising
    again within `limit` s, each step one line, no exit, no watchdog kill, and a
    question answered; SIGHUP's status line counts one port reset more.
    Returns the journal lines."""
    guest, link = system
    wait_active(guest)
    pid = main_pid(guest)
    resets = port_resets_so_far(guest)
    start, silenced = silenced_and_back(guest, flag)
    try:
        lines = wait_line(guest, RUNG2, start, timeout=30)
        wait_line(guest, "info: advertising", start + len(lines) - len(after(lines, RUNG2)), timeout=limit + 10)
    except AssertionError as error:
        # The emulated dongle's and the kernel's side of the story, for a failure that depends on timing.
        raise AssertionError(f"{error}\n{guest.dongle_report(gadget_chars=6000)}") from None
    lines = journal(guest)[start:]
    back = advertising_after(lines, silenced)
    report(capsys, what, back, lines)
    assert sum(line.endswith(RUNG1) for line in lines) == 1 and sum(RUNG2 in line for line in lines) == 1, lines
    assert not any(RUNG3 in line or "Watchdog timeout" in line for line in lines), lines
    assert back < limit, f"{back:.1f} s"
    assert main_pid(guest) == pid, "the process was restarted"
    assert ask(link) in SLUGS
    assert port_resets_so_far(guest) == resets + 1
    return lines


def test_a_dongle_silent_until_its_port_is_reset_comes_back_in_the_same_process(system, capsys):
    # A probe within 5 s, its 3-s timeout, the reset's 3 s, the port reset and bring-up.
    comes_back_in_the_same_process(system, capsys, "silent-until-port-reset", "silent until a port reset", 5 + 3 + 3 + 5)
    assert "port reset: the controller answers commands again" in system[0].file("gadget.log")
    journal_priorities_hold(system[0])


def journal_priorities_hold(guest):
    """Each of the program's lines reached the journal with its own priority
    (the sd-daemon prefix, consumed by journald): `journalctl -p warning`
    shows exactly the run's warnings and errors (the stall's), `-p info` the
    rest but debug."""
    import json
    own = f"journalctl -u {UNIT} _COMM=itcb-dongle --no-pager"
    warnings = guest.run(f"{own} -p warning -o cat; true")[1].splitlines()
    info = guest.run(f"{own} -p info -o cat; true")[1].splitlines()
    records = [json.loads(line) for line in guest.run(f"{own} -o json; true")[1].splitlines() if line.startswith("{")]
    priorities = {"error": "3", "warning": "4", "info": "6", "debug": "7", "trace": "7"}
    for record in records:
        message = record["MESSAGE"]
        assert message.startswith("itcb-dongle: "), record
        assert record["PRIORITY"] == priorities[message.split(": ")[1]], record
    severe = [r["MESSAGE"] for r in records if r["PRIORITY"] in ("3", "4")]
    not_debug = [r["MESSAGE"] for r in records if r["PRIORITY"] != "7"]
    # Read before the whole: a line logged in between is only in the later list.
    assert warnings == severe[:len(warnings)] and any(RUNG2 in line for line in warnings), warnings
    assert info == not_debug[:len(info)] and any("info: advertising" in line for line in info), info



def test_a_dead_dongle_exits_4_and_restarts_ever_further_apart(system, capsys):
    guest, link = system
    flag = os.path.join(guest.work, "swallow-commands")
    try:
        start, silenced = silenced_and_back(guest, "swallow-commands")
        lines = wait_line(guest, RUNG3, start, timeout=40)
        exited = stamp(next(line for line in lines if RUNG3 in line)) - silenced
        # Restarted by systemd: the next start waits 5 s, its bring-up and warm-start port
        # reset go unanswered (exit 4 again), the one after waits 10 s.
        lines = wait_line(guest, "waiting 10 s before trying it again", start, timeout=60)
        answering = in_guest(guest, "answering-again", "rm swallow-commands")
        position = start + len(lines)
        wait_line(guest, "info: advertising", position, timeout=40)
        lines = journal(guest)[start:]
        back = advertising_after(lines, answering)
        report(capsys, f"dead (exit 4 {exited:.1f} s after it went silent); once it answers again", back, lines)
        # Each step once in the process that climbed (the restarts' bring-ups take the warm-start port reset).
        first = lines[:next(i for i, line in enumerate(lines) if RUNG3 in line) + 1]
        assert sum(line.endswith(RUNG1) for line in first) == 1 and sum(RUNG2 in line for line in first) == 1, lines
        assert sum("status=4" in line for line in lines) >= 2, lines
        assert any("was silent at the last 1 start(s); waiting 5 s" in line for line in lines), lines
        assert not any("Watchdog timeout" in line for line in lines), lines
        # Back: the count of silent starts is gone, the next restart will not wait.
        assert guest.run("ls -A /run/itcb-dongle/1-1; true")[1].strip() == ""
        assert back < 10 + 5, f"{back:.1f} s"  # the 10-s wait, then a bring-up
        wait_active(guest)
        assert ask(link) in SLUGS
    finally:
        if os.path.exists(flag):
            os.remove(flag)


# Last of the module: a dongle that leaves the bus and enumerates again is the
# emulation's hardest moment (the gadget's process ends and a new one plugs in
# while the kernel verifies the reset); should the emulated dongle come back
# wedged, no later scenario inherits it.
def test_a_dongle_that_re_enumerates_at_its_port_reset_comes_back_in_the_same_process(system, capsys):
    lines = comes_back_in_the_same_process(system, capsys, "silent-until-reenumerated",
                                           "re-enumerated at its port reset", 5 + 3 + 3 + 10)
    assert any("left the bus at its port reset" in line for line in lines), lines
    assert "leaving the bus to enumerate again" in system[0].file("gadget.log")

