"""A fleet on one host: four emulated dongles in one guest under
systemd as PID 1, each plugged into its own bus (dummy_hcd num=4, FunctionFS
gadgets from ffs_dongle.py: paths 1-1 … 4-1, serials ITCB0001 … ITCB0004,
each with its own Bumble controller on the host link). The project's udev
rule starts one instance of the template per dongle (itcb-dongle@N-1), each
advertising the name from its per-dongle file (/etc/itcb-dongle/N-1.conf:
FleetN). Sixteen Bumble centrals, four per dongle, ask 25 questions each at
once; dongle 3 is pulled while they ask: its instance stops (exit 8, the
unit's normal end), the other three answer every question, and plugged in
again dongle 3 serves its askers the rest. Peak resident memory and CPU time
per question of each instance are measured in the guest and printed."""
import asyncio
import os
import re
import time

import pytest
import bumble_client
from bumble_client import EightBall, central
from fixture import Guest, Link
from harness import SLUGS

DONGLES = (1, 2, 3, 4)
ASKERS = 4  # per dongle: the peripheral's default --max-centrals
QUESTIONS = 25
PULLED = 3
HZ = 100  # the guest kernel's USER_HZ (/proc/PID/stat ticks)
STEP = 60  # each GATT step's limit: sixteen links set up at once on a loaded TCG guest take their time


@pytest.fixture
def patient_steps():
    """bumble_client's per-step limit (15 s) raised for this module's askers."""
    saved, bumble_client.STEP = bumble_client.STEP, STEP
    yield
    bumble_client.STEP = saved


@pytest.fixture(scope="module")
def fleet():
    # [0..3] behind the dongles, then the 16 centrals, then 4 spares for the pulled dongle's askers.
    link = Link(len(DONGLES) + len(DONGLES) * ASKERS + ASKERS)
    guest = Guest(link.ports[:len(DONGLES)], systemd=True, fleet=True, boot_timeout=240)
    yield guest, link
    guest.stop()
    link.stop()


def unit(n):
    return f"itcb-dongle@{n}-1.service"


def states(guest):
    out = guest.run("for n in 1 2 3 4; do echo $n $(systemctl is-active itcb-dongle@$n-1.service); done; true", timeout=180)[1]
    return {int(line.split()[0]): line.split()[1] for line in out.splitlines() if len(line.split()) == 2}


def wait_states(guest, wanted, timeout=90):
    deadline = time.time() + timeout
    seen = {}
    while time.time() < deadline:
        seen = states(guest)
        if all(seen.get(n) == state for n, state in wanted.items()):
            return
        time.sleep(1)
    _, status = guest.run("systemctl status 'itcb-dongle@*' --no-pager -l; journalctl -u 'itcb-dongle@*' --no-pager"
                          " -n 60; true", timeout=180)
    raise AssertionError(f"units are {seen}, not {wanted}:\n{status}\n{guest.diagnostics()}")


def figures(guest):
    """Per running instance: main PID, peak resident (VmHWM, kB), CPU ticks used so far."""
    out = guest.run("for n in 1 2 3 4; do pid=$(systemctl show -p MainPID --value itcb-dongle@$n-1.service);"
                    " [ \"$pid\" -gt 0 ] 2>/dev/null || continue;"
                    " set -- $(cut -d')' -f2 /proc/$pid/stat);"  # from field 3 (state) on: utime is $12, stime $13
                    " echo $n $pid $(sed -n 's/^VmHWM:[[:space:]]*\\([0-9]*\\) kB/\\1/p' /proc/$pid/status)"
                    " $((${12} + ${13})); done; true", timeout=180)[1]
    result = {}
    for line in out.splitlines():
        words = line.split()
        if len(words) == 4:
            result[int(words[0])] = {"pid": int(words[1]), "hwm_kb": int(words[2]), "ticks": int(words[3])}
    return result


def test_four_dongles_each_start_their_own_instance(fleet):
    guest, _ = fleet
    ready = guest.file("agent.ready")
    serials = {f"ITCB000{n}" for n in DONGLES}
    for n in DONGLES:
        assert f"dongle {n}-1 0a12:0001 serial ITCB000{n} speed 12 Mbit/s" in ready, ready
    wait_states(guest, {n: "active" for n in DONGLES})
    # One journalctl for all (a TCG guest is slow): each line with the unit it came from.
    guest.check("journalctl -u 'itcb-dongle@*' --no-pager -o json --output-fields=_SYSTEMD_UNIT,MESSAGE"
                " | grep -E 'opened|advertising' > journal.json", timeout=180)
    out = guest.check("for n in 1 2 3 4; do echo \"== $n\"; systemctl show -p StatusText -p User -p MainPID"
                      " itcb-dongle@$n-1.service; grep '\"itcb-dongle@'$n'-1.service\"' journal.json;"
                      " tr '\\0' '\\n' < /proc/$(systemctl show -p MainPID --value"
                      " itcb-dongle@$n-1.service)/environ | grep ITCB_NAME; udevadm info -q property /sys/bus/usb/devices/$n-1"
                      " | grep -E 'SYSTEMD_WANTS|ID_SERIAL_SHORT'; done", timeout=180)
    sections = out.split("== ")[1:]
    pids = set()
    for n, section in zip(DONGLES, sections):
        # Each instance's journal names its own dongle (bus-port, VID:PID) and its own name.
        assert f"opened usb:{n}-1 (0a12:0001), detached from its kernel driver" in section, out
        assert f"ITCB_NAME=Fleet{n}" in section and "User=itcb" in section, out
        # The status says it advertises, or (after the first 15 s period) the counts line that follows it.
        assert re.search(r"StatusText=(advertising|0 central\(s\) connected)", section), out
        assert f"SYSTEMD_WANTS=itcb-dongle@{n}-1.service" in section and f"ID_SERIAL_SHORT=ITCB000{n}" in section, out
        for other in DONGLES:
            assert other == n or f"usb:{other}-1" not in section, out
        pids.add(next(line for line in section.splitlines() if line.startswith("MainPID=")))
    assert len(pids) == 4 and serials, out


async def ask_all(link, guest, pulled_at):
    """16 askers at once; dongle PULLED is unplugged once `pulled_at` answers
    have arrived in all, and plugged in again once its unit has stopped."""
    loop = asyncio.get_running_loop()
    answered = {"total": 0, "askers": set()}
    connecting = {n: asyncio.Lock() for n in DONGLES}
    begun = time.time()
    progress = open(os.path.join(guest.work, "askers.log"), "w", buffering=1)  # seconds, dongle/asker, answers
    pulled = asyncio.Event()
    events = []

    async def unless_lost(step, lost):
        task, waiter = asyncio.ensure_future(step), asyncio.ensure_future(lost.wait())
        done, _ = await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            waiter.cancel()
            return task.result()
        task.cancel()
        raise ConnectionError("the link went down")

    async def asker(n, k):
        port = link.ports[len(DONGLES) + (n - 1) * ASKERS + k]
        # A Bumble controller whose connection attempt never completed refuses the next
        # one (COMMAND_DISALLOWED: Create Connection Cancel does not clear it): after a
        # failure the pulled dongle's askers go on from a spare controller.
        spare = link.ports[len(DONGLES) * (ASKERS + 1) + k]
        address = f"F1:F2:F3:F4:{n:02X}:{0xC0 + k:02X}"
        answers, retries, errors, started = [], 0, [], time.time()
        deadline = time.time() + 240
        while len(answers) < QUESTIONS and time.time() < deadline:
            try:
                # After a failure: a spare controller and another address (the old link's
                # address may still be known to the dongle's controller).
                async with central(spare if retries else port,
                                   address if not retries else f"F1:F2:F3:F5:{n:02X}:{0xC0 + k * 8 + retries % 8:02X}") as device:
                    ball = None
                    try:
                        # One connection set up at a time per dongle: Bumble's virtual link loses all
                        # but one of several centrals' connection requests to one advertisement (on
                        # a radio the others connect at the next one); asking is concurrent.
                        async with connecting[n]:
                            await bumble_client.find(device, f"Fleet{n}", timeout=STEP)  # seen, then connect
                            ball = await EightBall.connect(device, f"Fleet{n}")
                        lost = asyncio.Event()
                        ball.connection.on("disconnection", lambda *_: lost.set())
                        await ball.subscribe()
                        while len(answers) < QUESTIONS:
                            answer = await unless_lost(ball.ask(f"Fleet{n} asker {k} question {len(answers)}?"), lost)
                            answers.append(answer.decode())
                            answered["total"] += 1
                            answered["askers"].add((n, k))
                            progress.write(f"{time.time() - begun:.1f} {n}/{k} {len(answers)}\n")
                            if pulled.is_set():
                                answered[n] = answered.get(n, 0) + 1  # served by the instance the re-plug started
                        await asyncio.sleep(1)
                        extra = ball.answers.qsize()  # an answer meant for another asker would show here
                        assert extra == 0, f"asker {n}/{k} got {extra} answers it did not ask for"
                        await ball.disconnect()
                    except BaseException:
                        # The link to a pulled dongle stays up in the virtual radio (its controller keeps
                        # running): take it down, or this central's controller refuses the next connection.
                        if ball is not None:
                            try:
                                await asyncio.wait_for(ball.connection.disconnect(), 5)
                            except Exception:  # noqa: BLE001 - already gone
                                pass
                        raise
            except Exception as error:  # noqa: BLE001 - Bumble's HCI errors too: recorded, and fatal but for PULLED
                errors.append(f"{type(error).__name__}: {error}")
                progress.write(f"{time.time() - begun:.1f} {n}/{k} error {type(error).__name__}: {error}\n")
                if n != PULLED:
                    break  # only the pulled dongle's askers may lose a question
                retries += 1
                await asyncio.sleep(2)
        return n, k, answers, retries, errors, time.time() - started

    async def puller():
        # Once every asker is connected and has its first answer (no connection being set up
        # at the pull) and a quarter of all questions are answered.
        while answered["total"] < pulled_at or len(answered["askers"]) < len(DONGLES) * ASKERS:
            await asyncio.sleep(0.2)
        events.append(("unplug", answered["total"], time.time()))
        progress.write(f"{time.time() - begun:.1f} pulling dongle {PULLED}\n")
        await loop.run_in_executor(None, guest.check, f"unplug_n {PULLED}", 180)
        await loop.run_in_executor(None, wait_states, guest, {PULLED: "inactive"}, 60)
        events.append(("stopped", answered["total"], time.time()))
        await loop.run_in_executor(None, guest.check, f"plug_n {PULLED}", 180)
        await loop.run_in_executor(None, wait_states, guest, {PULLED: "active"}, 90)
        events.append(("serving", answered["total"], time.time()))
        pulled.set()

    pull = asyncio.ensure_future(puller())
    results = await asyncio.gather(*(asker(n, k) for n in DONGLES for k in range(ASKERS)))
    await asyncio.wait_for(pull, 120)
    return results, events, answered


def test_four_dongles_sixteen_centrals_and_one_pulled_mid_run(fleet, capsys, patient_steps):
    guest, link = fleet
    wait_states(guest, {n: "active" for n in DONGLES})
    before = figures(guest)
    started = time.time()
    results, events, answered = asyncio.run(asyncio.wait_for(ask_all(link, guest, pulled_at=len(DONGLES) * ASKERS * QUESTIONS // 4),
                                                   480))
    elapsed = time.time() - started
    after = figures(guest)
    with capsys.disabled():
        print(f"\nevents {events}")
        for n, k, answers, retries, errors, seconds in results:
            print(f"asker {n}/{k}: {len(answers)} answers in {seconds:.0f} s, {retries} retries, {errors[:3]}")

    for n, k, answers, retries, errors, _ in results:
        assert len(answers) == QUESTIONS and all(a in SLUGS for a in answers), (n, k, answers, errors)
        if n != PULLED:
            assert retries == 0 and not errors, f"dongle {n} asker {k} missed a question: {errors}"
    # The pulled dongle's instance ended as the unit expects (exit 8, not failed) and a new one served.
    journal = guest.check(f"journalctl -u {unit(PULLED)} --no-pager -o cat", timeout=180)
    assert "unplugged" in journal and journal.count(f"opened usb:{PULLED}-1 (0a12:0001)") == 2, journal
    assert after[PULLED]["pid"] != before[PULLED]["pid"], (before, after)
    for n in DONGLES:
        if n != PULLED:
            assert after[n]["pid"] == before[n]["pid"], f"instance {n} restarted: {before} {after}"

    lines = [f"guest up in {guest.boot_seconds:.0f} s; four dongles, {len(results)} centrals x {QUESTIONS} questions in {elapsed:.0f} s; events {events}"]
    for n in DONGLES:
        if after[n]["pid"] == before[n]["pid"]:
            asked, ticks = sum(len(r[2]) for r in results if r[0] == n), after[n]["ticks"] - before[n]["ticks"]
        else:  # the re-plugged dongle's new instance: from its start (bring-up included)
            asked, ticks = answered.get(n, 0), after[n]["ticks"]
        # (The re-plugged instance may have been asked nothing yet when the others finished.)
        cpu = f"CPU {ticks * 1000 / HZ / asked:.1f} ms per question" if asked else f"CPU {ticks * 1000 / HZ:.0f} ms, no question yet"
        lines.append(f"instance {n}-1: peak resident {after[n]['hwm_kb']} kB, {cpu} ({asked} questions; pid {after[n]['pid']})")
    with capsys.disabled():
        print("\n" + "\n".join(lines))
