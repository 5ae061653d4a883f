"""Appliance lifecycle against Bumble virtual controllers: sd_notify, clean
SIGTERM, and recovery from a controller that stops answering or reports a
hardware error."""
import asyncio
import os
import signal
import time

from bumble_client import EightBall, central
from harness import BINARY, SLUGS, Dongle, NotifyListener, Proxy, ask, sent_commands

HCI_RESET = 0x0C03
HCI_DISCONNECT = 0x0406
LE_SET_ADVERTISE_ENABLE = 0x200A


def peripheral(port, name, *extra, env=None):
    return Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{port}", "--name", name,
                  "--log-level", "debug", *extra, env=env)


def test_sd_notify_ready_after_advertising_and_watchdog(controllers, workdir):
    listener = NotifyListener(workdir)
    started = time.time()
    dongle = peripheral(controllers.ports[0], "Notify", env={"NOTIFY_SOCKET": listener.path,
                                                             "WATCHDOG_USEC": "400000"})
    try:
        dongle.wait_for("itcb-dongle: info: advertising")

        def pings():
            return [stamp for stamp, line in list(listener.messages) if line == "WATCHDOG=1"]

        # Pings keep coming (WATCHDOG_USEC/2 = 200 ms apart): five, with a hang limit, not a count in a window.
        deadline = time.time() + 30
        while len(pings()) < 5 and time.time() < deadline:
            time.sleep(0.05)
        assert len(pings()) >= 5, f"{len(pings())} watchdog pings in 30 s; got {listener.messages}"
        # Never closer than 200 ms: counted from the start of the process, which no delay of ours can crowd.
        elapsed = time.time() - started
        assert len(pings()) <= elapsed / 0.2 + 1, f"{len(pings())} watchdog pings in {elapsed:.1f} s"
        messages = [line for _, line in listener.messages]
        assert "READY=1" in messages, f"no READY=1; got {messages}"
        # READY=1 is sent with the advertising status, from the event that started advertising.
        assert messages[messages.index("READY=1") + 1].startswith("STATUS=advertising"), messages
        dongle.process.send_signal(signal.SIGTERM)
        assert dongle.process.wait(10) == 0
        assert listener.wait_first("STOPPING=1") is not None
    finally:
        dongle.stop()
        listener.close()


def voluntary_switches(pid):
    """Times the process's threads went to sleep (voluntary context switches): one per wake-up of the loop."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/status") as f:
            total += sum(int(line.split()[1]) for line in f if line.startswith("voluntary_ctxt_switches"))
    return total


def test_no_notify_socket_means_no_watchdog_wakeups(controllers):
    # Without systemd the loop sleeps in poll(2): no periodic work, no messages. Counted as the times it
    # went back to sleep, which a busy machine does not change (CPU ticks would be time, so load).
    dongle = peripheral(controllers.ports[0], "Quiet")
    try:
        dongle.wait_for("itcb-dongle: info: advertising")
        time.sleep(1.0)
        before = voluntary_switches(dongle.process.pid)
        time.sleep(2.0)
        woke = voluntary_switches(dongle.process.pid) - before
        assert woke == 0, f"the idle peripheral woke {woke} times in 2 s"
    finally:
        dongle.stop()


def test_sigterm_mid_connection_exits_cleanly(controllers, workdir):
    snoop = os.path.join(workdir, "term.btsnoop")
    dongle = peripheral(controllers.ports[0], "TermBall", "--btsnoop", snoop)
    try:
        dongle.wait_for("advertising")

        async def connect_and_stay():
            async with central(controllers.ports[1]) as device:
                ball = await EightBall.connect(device, "TermBall")
                assert (await ball.ask("Still there?")).decode() in SLUGS
                gone = asyncio.get_running_loop().create_future()
                ball.connection.on("disconnection", lambda reason: gone.done() or gone.set_result(reason))
                started = time.time()
                dongle.process.send_signal(signal.SIGTERM)
                # The central sees the link go down: we disconnect before resetting.
                await asyncio.wait_for(gone, 5)
                return started

        started = asyncio.run(connect_and_stay())
        code = dongle.process.wait(5)
        assert code == 0, dongle.log
        assert time.time() - started < 2.5
    finally:
        dongle.stop()
    commands = sent_commands(snoop)
    disable = [i for i, (op, p) in enumerate(commands) if op == LE_SET_ADVERTISE_ENABLE and p == 0]
    disconnect = [i for i, (op, _) in enumerate(commands) if op == HCI_DISCONNECT]
    resets = [i for i, (op, _) in enumerate(commands) if op == HCI_RESET]
    assert disable and disconnect and len(resets) >= 2, commands
    # Order of the shutdown: advertising off, disconnect, then the final reset.
    assert disable[-1] < resets[-1] and disconnect[-1] < resets[-1]


def test_recovers_when_controller_stops_answering(controllers):
    proxy = Proxy(controllers.ports[0])
    dongle = peripheral(proxy.port, "Phoenix", "--health-check", "1")
    try:
        dongle.wait_for("advertising")
        answers, _ = asyncio.run(ask(controllers.ports[1], "Phoenix", ["Before?"]))
        assert answers[0].decode() in SLUGS
        # The controller goes silent: the health probe's command times out (3 s)
        # and the host resets and re-initialises the controller.
        silenced = time.time()
        proxy.silent.set()
        dongle.wait_for("did not answer HCI command", timeout=10, after=silenced)
        time.sleep(1.0)
        proxy.silent.clear()
        resumed = time.time()
        dongle.wait_for("controller ready", timeout=15, after=resumed - 0.5)
        dongle.wait_for("info: advertising", timeout=10, after=resumed - 0.5)
        answers, _ = asyncio.run(ask(controllers.ports[1], "Phoenix", ["After?", "Again?", "Still?"]))
        assert all(a.decode() in SLUGS for a in answers)
        assert dongle.process.poll() is None
    finally:
        dongle.stop()
        proxy.close()


def test_watchdog_pings_only_while_the_controller_answers(controllers, workdir):
    """WATCHDOG=1 goes out only while the controller answers (a probe's round
    trip within two watchdog periods), so systemd restarts a unit whose radio
    nothing brings back; the pings resume once it answers again. (Over TCP the
    host keeps resetting a silent controller: no port to reset.)"""
    listener = NotifyListener(workdir)
    proxy = Proxy(controllers.ports[0])
    # WATCHDOG_USEC/2 = 500 ms: pings and probes every 500 ms, none after 1 s without an answer.
    dongle = peripheral(proxy.port, "Heart", env={"NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "1000000"})
    try:
        dongle.wait_for("info: advertising")
        time.sleep(1.5)
        silenced = time.time()
        proxy.silent.set()
        dongle.wait_for("did not answer HCI command", timeout=10, after=silenced)
        time.sleep(2.0)
        pings = [stamp for stamp, line in listener.messages if line == "WATCHDOG=1"]
        assert [p for p in pings if silenced - 1.5 <= p < silenced], "no pings while the controller answered"
        late = [p - silenced for p in pings if p > silenced + 1.2]
        assert not late, f"pings {late} s after the controller went silent"
        assert dongle.process.poll() is None
        proxy.silent.clear()
        resumed = time.time()
        dongle.wait_for("info: advertising", timeout=15, after=resumed - 0.5)
        time.sleep(1.5)
        assert [p for p, line in listener.messages if line == "WATCHDOG=1" and p > resumed], "pings did not resume"
    finally:
        dongle.stop()
        proxy.close()
        listener.close()


def test_recovers_from_hardware_error_event(controllers):
    proxy = Proxy(controllers.ports[0])
    dongle = peripheral(proxy.port, "Sturdy")
    try:
        dongle.wait_for("advertising")
        injected = time.time()
        proxy.inject_to_host(bytes([0x04, 0x10, 0x01, 0x42]))  # HCI Hardware Error, code 0x42
        dongle.wait_for("hardware error 0x42", timeout=5, after=injected - 0.5)
        dongle.wait_for("controller ready", timeout=10, after=injected)
        answers, _ = asyncio.run(ask(controllers.ports[1], "Sturdy", ["Recovered?"]))
        assert answers[0].decode() in SLUGS
    finally:
        dongle.stop()
        proxy.close()


def test_sighup_logs_status(controllers):
    dongle = peripheral(controllers.ports[0], "Hup")
    try:
        dongle.wait_for("advertising")
        dongle.process.send_signal(signal.SIGHUP)
        dongle.wait_for("status: running: 0 connection(s)", timeout=5)
        assert dongle.process.poll() is None
    finally:
        dongle.stop()


def test_journal_lines_carry_their_priority(controllers):
    """Under systemd (stderr is the stream JOURNAL_STREAM names) every line
    starts with its sd-daemon priority, so `journalctl -p warning` shows the
    stall's warnings and not the rest; anywhere else, no prefix (a terminal, a
    pipe, or a child that inherited the variable but writes elsewhere)."""
    proxy = Proxy(controllers.ports[0])
    command = ("JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec \"$0\" --role peripheral --transport "
               f"tcp:127.0.0.1:{proxy.port} --name Journal8 --health-check 1 --log-level debug")
    dongle = Dongle("sh", "-c", command, BINARY, binary=False)
    elsewhere = peripheral(controllers.ports[1], "Elsewhere", env={"JOURNAL_STREAM": "1:1"})
    try:
        dongle.wait_for("itcb-dongle: info: advertising")
        proxy.silent.set()
        silenced = time.time()
        dongle.wait_for("did not answer HCI command", timeout=10, after=silenced)
        proxy.silent.clear()
        dongle.wait_for("itcb-dongle: info: advertising", timeout=20, after=time.time() - 0.5)
        elsewhere.wait_for("itcb-dongle: info: advertising")
        priorities = {"error": 3, "warning": 4, "info": 6, "debug": 7, "trace": 7}
        levels = set()
        for _, line in dongle.lines:
            assert line.startswith("<") and ">itcb-dongle: " in line, line
            priority, rest = line[1:].split(">", 1)
            level = rest.split(": ")[1]
            assert int(priority) == priorities[level], line
            levels.add(level)
        assert {"error", "info", "debug"} <= levels, dongle.log  # the stall is an error line
        assert all(line.startswith("itcb-dongle: ") for _, line in elsewhere.lines), elsewhere.log
    finally:
        dongle.stop()
        elsewhere.stop()
        proxy.close()
