"""USB endurance: connect → ask → disconnect, N times, against one
peripheral process over USB in the QEMU guest, with the process's resident
memory (VmRSS) and open descriptors sampled at the start, the middle and the
end. Used by test_usb.py (a short run, in the test command) and runnable alone
for the long one:

    .venv/bin/python Tests/USBFixture/soak_usb.py 1000      # prints one JSON line

Each cycle is what a phone does: connect (to the address found once by
scanning), discover, subscribe, ask one question, disconnect. One Bumble
device on the host asks every time, on the same controller."""
import asyncio
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "PythonSupport"))
from bumble_client import SERVICE, QUESTION, ANSWER, central, find  # noqa: E402

STEP = 60  # each step's limit: generous, the host may be loaded; a hang still ends the run

from bumble.device import Peer  # noqa: E402


def sample(guest, name):
    """{rss_kb, fds, hwm_kb} of the program started as NAME (start() in test_usb.py)."""
    out = guest.check("pid=$(pgrep -x itcb-dongle | head -1); [ -n \"$pid\" ] || { echo none; exit 1; };"
                      " echo $(sed -n 's/^VmRSS:[[:space:]]*\\([0-9]*\\) kB/\\1/p' /proc/$pid/status)"
                      " $(sed -n 's/^VmHWM:[[:space:]]*\\([0-9]*\\) kB/\\1/p' /proc/$pid/status)"
                      " $(ls /proc/$pid/fd | wc -l) $pid", timeout=120)
    rss, hwm, fds, pid = (int(x) for x in out.split()[-4:])
    return {"rss_kb": rss, "hwm_kb": hwm, "fds": fds, "pid": pid}


cycle = [0]


async def cycles(port, name, count, on_sample, question="Soak?", died=lambda: None):
    """`count` connect → ask → disconnect cycles; on_sample(i) is awaited at the
    start (0), the middle (count // 2) and the end (count). Returns seconds per
    cycle. cycle[0] is the cycle under way (for a failure's report). `died()`
    is checked before each cycle: a guest gone (QEMU ended) fails the run with
    its reason instead of a GATT timeout."""
    async with central(port) as device:
        address = (await find(device, name, timeout=60)).address
        await on_sample(0)
        started = time.time()
        for i in range(1, count + 1):
            cycle[0] = i
            if why := died():
                raise RuntimeError(why)
            connection = await asyncio.wait_for(device.connect(address), STEP)
            peer = Peer(connection)
            await asyncio.wait_for(peer.discover_services([SERVICE]), STEP)
            service = peer.get_services_by_uuid(SERVICE)[0]
            await asyncio.wait_for(service.discover_characteristics([QUESTION, ANSWER]), STEP)
            answer = service.get_characteristics_by_uuid(ANSWER)[0]
            got = asyncio.get_running_loop().create_future()
            await asyncio.wait_for(answer.subscribe(lambda value: got.done() or got.set_result(bytes(value))), STEP)
            await asyncio.wait_for(service.get_characteristics_by_uuid(QUESTION)[0].write_value(
                f"{question} {i}?".encode(), with_response=True), STEP)
            await asyncio.wait_for(got, STEP)
            await asyncio.wait_for(connection.disconnect(), STEP)
            if i == count // 2 or i == count:
                await on_sample(i)
        return (time.time() - started) / count


def run(guest, link, count):
    """Starts a peripheral in the guest, runs the cycles, stops it (SIGTERM, exit 0).
    Returns the samples and the time per cycle."""
    extra = os.environ.get("USB_SOAK_ARGS", "")  # e.g. "--log-level debug --btsnoop soak.btsnoop" to debug a run
    guest.check(f"rm -f soak.rc; ( ./itcb-dongle --role peripheral --transport usb --name SoakBall {extra} > soak.log 2>&1;"
                " echo $? > soak.rc ) & sleep 0.2")
    guest.wait_for_file_text("soak.log", "info: advertising", timeout=60)
    samples = {}

    async def on_sample(i):
        samples[i] = await asyncio.get_running_loop().run_in_executor(None, sample, guest, "soak")

    per_cycle = asyncio.run(asyncio.wait_for(cycles(link.ports[1], "SoakBall", count, on_sample, died=guest.died),
                                             60 + count * 10))
    guest.check("pkill -TERM -x itcb-dongle; for i in $(seq 100); do [ -s soak.rc ] && break; sleep 0.1; done;"
                " cat soak.rc", timeout=60)
    return samples, per_cycle, guest.file("soak.rc").strip()


def main():
    from fixture import Guest, Link

    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    link = Link(3)
    # The guest lives as long as the cycles may take (about 1 s each on a loaded host; 10 s allowed).
    guest = Guest(link.ports[0], hard_timeout=600 + count * 10)
    try:
        started = time.time()
        try:
            samples, per_cycle, rc = run(guest, link, count)
        except BaseException as error:
            print(json.dumps({"cycles": count, "failed_in_cycle": cycle[0], "error": repr(error),
                              "guest": guest.died(), "log": guest.file("soak.log")[-1500:]}))
            raise
        print(json.dumps({"cycles": count, "seconds_per_cycle": round(per_cycle, 3), "exit": rc,
                          "seconds": round(time.time() - started), "samples": samples}))
    finally:
        guest.stop()
        link.stop()


if __name__ == "__main__":
    main()
