"""Faults that must not leave the appliance deaf or locked: a desynchronised H4 stream, a controller that goes silent under a
scanning central, a full disk under --btsnoop, idle links, what --log-level
debug and SIGHUP tell, and start-up calls that could block past SIGTERM (a FIFO
as --btsnoop or firmware file, a controller host that drops SYNs)."""
import asyncio
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time

import pytest

from bumble_client import EightBall, central
from harness import BINARY, SLUGS, Dongle, Proxy, VendorEmulation, ask, framing_losses


def peripheral(port, name, *extra):
    return Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{port}", "--name", name, *extra)


def recovers_after(proxy, dongle, garbage, name):
    """Injects `garbage` toward the host; the host must notice, reset the
    controller and answer again (10 s: a hang limit; it takes a few ms), and still stop at once on SIGTERM."""
    dongle.wait_for("info: advertising")
    answers, _ = asyncio.run(ask(proxy.target_port_peer, name, ["Before?"]))
    assert answers[0].decode() in SLUGS
    injected = time.time()
    proxy.inject_to_host(garbage)
    dongle.wait_for("out of sync", timeout=10, after=injected - 0.1)
    dongle.wait_for("info: advertising", timeout=10, after=injected)
    print(f"advertising again {time.time() - injected:.3f} s after the garbage")
    answers, _ = asyncio.run(ask(proxy.target_port_peer, name, ["After?", "Again?"]))
    assert all(a.decode() in SLUGS for a in answers)
    stopping = time.time()
    dongle.process.send_signal(signal.SIGTERM)
    assert dongle.process.wait(5) == 0, dongle.log
    # Out of sync, shutdown would wait out its 1 s grace and the reset's 3 s timeout: under 1 s is not that.
    assert time.time() - stopping < 1.0, "SIGTERM waited for its deadline: the stream is still out of sync"


def test_unknown_packet_type_resynchronises(controllers):
    proxy = Proxy(controllers.ports[0])
    proxy.target_port_peer = controllers.ports[1]
    dongle = peripheral(proxy.port, "Noise")
    try:
        recovers_after(proxy, dongle, bytes([0x07, 0x99, 0x42, 0x00, 0x13]), "Noise")
    finally:
        dongle.stop()
        proxy.close()


def test_acl_header_announcing_a_packet_that_never_comes_resynchronises(controllers):
    # A plausible ACL header (handle 0x040, 1020 bytes) from line noise: without a
    # stall check the de-framer would wait for, and swallow, everything after it.
    proxy = Proxy(controllers.ports[0])
    proxy.target_port_peer = controllers.ports[1]
    dongle = peripheral(proxy.port, "Garbled")
    try:
        recovers_after(proxy, dongle, bytes([0x02, 0x40, 0x20, 0xFC, 0x03, 0x01, 0x02]), "Garbled")
    finally:
        dongle.stop()
        proxy.close()


class NoisyLine(Proxy):
    """The proxy, counting the HCI Resets our host sends: each framing loss's recovery begins with one."""
    RESET = bytes.fromhex("01030c00")

    def __init__(self, target_port):
        self.resets = 0
        super().__init__(target_port)

    def passing(self, source, data):
        if source is self.host:
            self.resets += data.count(self.RESET)


def held_back(lines, line_text, summary_text):
    """The occurrences `lines` account for: one per line with `line_text`, plus the count of each summary."""
    total = 0
    for line in lines:
        if summary_text in line:
            total += int(line.split(summary_text)[1].split(" more ")[0])
        elif line_text in line:
            total += 1
    return total


def test_twenty_seconds_of_noise_is_a_few_lines_a_second_and_every_loss_is_counted(controllers, tmp_path):
    # 20 s of noise gave 59 lines a second ("out of sync", "controller ready",
    # "advertising" for each burst). Now at most one line per kind a second,
    # and a count of the held ones when the burst ends; the metrics count each loss.
    line = NoisyLine(controllers.ports[0])
    line.target_port_peer = controllers.ports[1]
    metrics = tmp_path / "noise.prom"
    dongle = peripheral(line.port, "Static", "--metrics-file", str(metrics))
    try:
        dongle.wait_for("info: advertising")
        started, injected = time.time(), 0
        while time.time() - started < 20:
            # One burst per recovery: the next only once the host reset the controller, so each is one loss.
            resets = line.resets
            line.inject_to_host(bytes([0x07, 0x99, 0x42, 0x00, 0x13]))
            injected += 1
            deadline = time.time() + 10
            while line.resets == resets:
                assert time.time() < deadline, f"no HCI Reset after burst {injected}:\n{dongle.log}"
                time.sleep(0.002)
            time.sleep(0.03)
        noise_ended = time.time()
        dongle.wait_for("H4 stream out of sync, controller reset: ", after=noise_ended - 0.1, timeout=5)
        time.sleep(1.5)  # the other kinds' summaries
        lines = [text for stamp, text in dongle.lines if stamp >= started]
        print(f"{injected} bursts in {noise_ended - started:.1f} s: {len(lines)} lines", *lines, sep="\n")
        assert injected > 100, "the noise must repeat (a burst every ~50 ms)"
        assert len(lines) <= 2 * (noise_ended - started), "\n".join(lines)
        assert held_back(lines, "out of sync (", "H4 stream out of sync, controller reset: ") == injected, "\n".join(lines)
        assert held_back(lines, "info: controller ready", "controller ready: ") <= injected
        assert any("more in the last 10 s" in text for text in lines), "\n".join(lines)
        # Served again after the noise, and the metrics count every loss.
        answers, _ = asyncio.run(ask(line.target_port_peer, "Static", ["Quiet now?"]))
        assert answers[0].decode() in SLUGS
        dongle.process.send_signal(signal.SIGTERM)
        assert dongle.wait_exit(10) == 0, dongle.log
        assert framing_losses(metrics) == injected, metrics.read_text()
    finally:
        dongle.stop()
        line.close()


def test_central_with_a_controller_gone_silent_exits_4_naming_it(controllers):
    proxy = Proxy(controllers.ports[0])
    central_process = Dongle("--role", "central", "--transport", f"tcp:127.0.0.1:{proxy.port}",
                             "--question", "Anyone?", "--timeout", "6", "--log-level", "info")
    try:
        central_process.wait_for("controller ready", timeout=10)
        proxy.silent.set()
        code = central_process.process.wait(30)
        assert code == 4, central_process.log
        assert f"controller at tcp:127.0.0.1:{proxy.port} stopped answering" in central_process.log
        assert "no 8-Ball found" not in central_process.log
    finally:
        central_process.stop()
        proxy.close()


def test_idle_central_is_disconnected_and_logged_with_its_address(controllers):
    dongle = peripheral(controllers.ports[0], "Idle", "--idle-timeout", "1.5")

    async def connect_and_idle():
        async with central(controllers.ports[1]) as device:
            ball = await EightBall.connect(device, "Idle")
            gone = asyncio.get_running_loop().create_future()
            ball.connection.on("disconnection", lambda reason: gone.done() or gone.set_result(reason))
            started = time.time()
            await asyncio.wait_for(gone, 15)  # a hang limit: the timeout is 1.5 s
            return time.time() - started, str(ball.connection.self_address).split("/")[0]

    try:
        dongle.wait_for("info: advertising")
        waited, address = asyncio.run(connect_and_idle())
        # Discovery and the subscription count as requests; the link then idles. Not before half the
        # timeout (the central's own clock starts a little after its last request, later on a busy machine).
        print(f"disconnected {waited:.2f} s after the last request (--idle-timeout 1.5)")
        assert waited >= 0.75, waited
        line = dongle.wait_for("disconnecting idle central", timeout=2)
        assert any(address.upper() in l.upper() for _, l in dongle.lines if "idle central" in l), dongle.log
        # The slot is free again: another central gets its answer.
        answers, _ = asyncio.run(ask(controllers.ports[1], "Idle", ["Free again?"]))
        assert answers[0].decode() in SLUGS
    finally:
        dongle.stop()


def test_busy_central_is_not_idle(controllers):
    dongle = peripheral(controllers.ports[0], "Busy", "--idle-timeout", "1")

    async def keep_asking():
        async with central(controllers.ports[1]) as device:
            ball = await EightBall.connect(device, "Busy")
            answers = []
            # 2 s of questions 0.25 s apart: past the 1 s timeout, with room for a slow machine between two.
            for i in range(8):
                answers.append(await ball.ask(f"Number {i}?"))
                await asyncio.sleep(0.25)
            return answers

    try:
        dongle.wait_for("info: advertising")
        answers = asyncio.run(keep_asking())
        assert len(answers) == 8 and all(a.decode() in SLUGS for a in answers)
        assert dongle.count("idle central") == 0
    finally:
        dongle.stop()


def test_idle_timeout_rejects_bad_values():
    for value in ["-1", "86401", "soon"]:
        result = subprocess.run([BINARY, "--role", "peripheral", "--idle-timeout", value],
                                capture_output=True, text=True, timeout=10)
        assert result.returncode == 2, (value, result.stderr)
        assert "idle-timeout" in result.stderr


def test_debug_narrates_att_and_trace_shows_bytes_not_types(controllers):
    dongle = peripheral(controllers.ports[0], "Chatty", "--log-level", "trace")
    try:
        dongle.wait_for("info: advertising")

        async def scenario():
            async with central(controllers.ports[1]) as device:
                ball = await EightBall.connect(device, "Chatty", mtu=247)
                assert (await ball.ask("Talk?")).decode() in SLUGS

        asyncio.run(scenario())
        dongle.wait_for("info: answer to ", timeout=5)
        # Each line as it comes: the log is read from a pipe, the notification's line may follow the answer's.
        for expected in ["ATT < Exchange MTU Request, MTU", "ATT > Exchange MTU Response", "ATT < Write Request, handle 0x",
                         "ATT > Write Response", "ATT > Handle Value Notification, handle 0x", "connected:"]:
            dongle.wait_for(expected, timeout=10)
        log = dongle.log
        assert "FixedBytes<" not in log and "storage:" not in log
        # The controller's manufacturer by name, not a bare number (Bumble's is 0xFFFF).
        ready = next(l for _, l in dongle.lines if "controller ready" in l)
        assert "manufacturer 0xffff" not in ready and "(0xFFFF)" in ready, ready
    finally:
        dongle.stop()


def test_sighup_status_counts_questions_names_peers_and_uptime(controllers):
    dongle = peripheral(controllers.ports[0], "Status")

    async def ask_and_stay():
        async with central(controllers.ports[1]) as device:
            ball = await EightBall.connect(device, "Status")
            for q in ["One?", "Two?"]:
                assert (await ball.ask(q)).decode() in SLUGS
            sent = time.time()
            dongle.process.send_signal(signal.SIGHUP)
            # Connected until the status line is out (a hang limit, however slow the machine).
            for _ in range(200):
                if any("status: running" in line and stamp >= sent - 0.1 for stamp, line in list(dongle.lines)):
                    break
                await asyncio.sleep(0.05)
            return sent, str(ball.connection.self_address).split("/")[0]

    try:
        dongle.wait_for("info: advertising")
        sent, address = asyncio.run(ask_and_stay())
        dongle.wait_for("status: running: 1 connection(s)", timeout=5, after=sent - 0.1)
        line = [l for _, l in dongle.lines if "status: running" in l][-1]
        assert address.upper() in line.upper(), line
        assert "2 question(s) answered" in line and "uptime 0m" in line, line
    finally:
        dongle.stop()


class MuteController:
    """A TCP "controller" that accepts and never answers (reads and drops)."""

    def __init__(self):
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(4)
        self.port = self.listener.getsockname()[1]
        self.closed = False
        self.peers = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.closed:
            try:
                peer, _ = self.listener.accept()
            except OSError:
                return
            self.peers.append(peer)
            threading.Thread(target=self._drain, args=(peer,), daemon=True).start()

    def _drain(self, peer):
        try:
            while peer.recv(4096):
                pass
        except OSError:
            pass

    def close(self):
        self.closed = True
        for s in [self.listener, *self.peers]:
            try:
                s.close()
            except OSError:
                pass


def test_central_on_a_controller_that_never_answers_exits_4_at_once_in_every_mode():
    # A controller that answers nothing is the failure to report (exit 4), not
    # "no 8-Ball found" (6) nor a wait for the --timeout deadline, and nothing
    # was reset: no "controller reset; stopped".
    mute = MuteController()
    modes = {
        "scan": ["--scan", "--timeout", "5"],
        "question": ["--question", "x", "--timeout", "30"],
        "default": ["--question", "x?"],
    }
    started = time.time()
    runs = {name: Dongle("--role", "central", "--transport", f"tcp:127.0.0.1:{mute.port}", *args)
            for name, args in modes.items()}
    try:
        for name, run in runs.items():
            code = run.wait_exit(20)
            took = time.time() - started
            assert code == 4, (name, run.log)
            # A hang limit: the command timeout is 3 s; the log line below says which timeout ended it.
            assert took < 15.0, (name, took, run.log)
            assert f"controller at tcp:127.0.0.1:{mute.port} did not complete initialisation" in run.log, (name, run.log)
            for wrong in ["controller reset; stopped", "while scanning", "no 8-Ball found", "device offline"]:
                assert wrong not in run.log, (name, wrong, run.log)
    finally:
        for run in runs.values():
            run.stop()
        mute.close()


def btsnoop_records(data):
    """(whole records, bytes of a torn tail) of a BTSnoop file."""
    assert data[:8] == b"btsnoop\0" and struct.unpack(">II", data[8:16]) == (1, 1002)
    at, count = 16, 0
    while at + 24 <= len(data):
        original, included = struct.unpack(">II", data[at:at + 8])
        assert original == included
        if at + 24 + included > len(data):
            break
        at += 24 + included
        count += 1
    return count, len(data) - at


def test_btsnoop_on_a_full_tmpfs_says_disk_full_and_ends_at_a_whole_record(controllers, tmp_path):
    # A 64 KiB tmpfs (in a user and mount namespace of its own, so no root is
    # needed), filled to one free page: the log runs out mid-record.
    script = tmp_path / "run.sh"
    script.write_text(
        "set -e\nmount -t tmpfs -o size=64k tmpfs \"$1\"\nhead -c 61440 /dev/zero > \"$1/fill\"\n"
        "shift\nexec \"$@\"\n")
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["unshare", "-Urm", "true"], capture_output=True).returncode != 0:
        pytest.skip("no user namespaces for a private tmpfs")
    snoop = disk / "log.btsnoop"
    dongle = Dongle("unshare", "-Urm", "sh", str(script), str(disk), BINARY, "--role", "peripheral",
                    "--transport", f"tcp:127.0.0.1:{controllers.ports[0]}", "--name", "Tmpfs",
                    "--btsnoop", str(snoop), binary=False)
    try:
        dongle.wait_for("info: advertising")
        answers, _ = asyncio.run(asyncio.wait_for(
            ask(controllers.ports[1], "Tmpfs", [f"Full {i}?" for i in range(12)]), 60))
        assert all(a.decode() in SLUGS for a in answers)
        dongle.wait_for("btsnoop: cannot write", timeout=5)
        assert dongle.count("btsnoop: cannot write") == 1, dongle.log
        assert f"btsnoop: cannot write {snoop} (disk full)" in dongle.log, dongle.log
        assert "ioctl" not in dongle.log
        # Still serving.
        answers, _ = asyncio.run(asyncio.wait_for(ask(controllers.ports[1], "Tmpfs", ["After?"]), 30))
        assert answers[0].decode() in SLUGS
        # The file is in the namespace's tmpfs: read it through the process's root.
        data = open(f"/proc/{dongle.process.pid}/root{snoop}", "rb").read()
        count, torn = btsnoop_records(data)
        assert count > 20 and torn == 0, (count, torn, len(data))
        if shutil.which("tshark"):
            copy = tmp_path / "copy.btsnoop"
            copy.write_bytes(data)
            result = subprocess.run(["tshark", "-r", str(copy)], capture_output=True, text=True, timeout=60)
            assert "cut short" not in result.stderr + result.stdout, result.stderr
            assert result.returncode == 0, result.stderr
    finally:
        dongle.stop()


def test_a_peer_sending_smp_over_and_over_gets_two_lines_not_fifty(controllers):
    # A hostile central's SMP packets gave one info line each (2,143 in five
    # minutes): now the first, then one a minute per link, and the rest at the
    # disconnection. Each packet is still answered, and the 8-Ball still serves.
    dongle = peripheral(controllers.ports[0], "Pairless")

    async def pester():
        async with central(controllers.ports[1]) as device:
            ball = await EightBall.connect(device, "Pairless")
            for _ in range(50):
                ball.connection.send_l2cap_pdu(6, bytes.fromhex("01030001100707"))  # Pairing Request
                await asyncio.sleep(0.01)
            answer = await ball.ask("Still there?")
            await ball.disconnect()
            return answer

    try:
        dongle.wait_for("info: advertising")
        answer = asyncio.run(asyncio.wait_for(pester(), 60))
        assert answer.decode() in SLUGS
        dongle.wait_for("more SMP packet(s) from this peer refused", timeout=5)
        lines = [l for _, l in dongle.lines if "pairing refused" in l]
        assert len(lines) == 2, dongle.log
        assert "(and 48 more SMP packet(s)" in lines[1], lines
    finally:
        dongle.stop()


def test_a_central_that_only_reads_is_idle(controllers):
    # Only what an asker does (an accepted write: subscribe, question) restarts
    # the idle clock; reads and discovery do not, or centrals reading every 59 s
    # would hold every slot forever.
    dongle = peripheral(controllers.ports[0], "Reader", "--idle-timeout", "2")

    async def read_until_dropped():
        async with central(controllers.ports[1]) as device:
            ball = await EightBall.connect(device, "Reader")
            gone = asyncio.get_running_loop().create_future()
            ball.connection.on("disconnection", lambda reason: gone.done() or gone.set_result(reason))
            await ball.subscribe()
            subscribed = time.time()
            reads = 0
            while not gone.done() and time.time() - subscribed < 8:
                try:
                    await asyncio.wait_for(ball.answer.read_value(), 1)
                    reads += 1
                except Exception:
                    pass
                await asyncio.sleep(0.3)
            return gone.done(), time.time() - subscribed, reads

    try:
        dongle.wait_for("info: advertising")
        dropped, after, reads = asyncio.run(asyncio.wait_for(read_until_dropped(), 60))
        assert dropped and reads >= 3, (dropped, after, reads, dongle.log)
        print(f"dropped {after:.2f} s after subscribing (--idle-timeout 2), {reads} reads")
        assert after >= 1.0, after  # not before half the timeout: the central's clock starts late on a busy machine
        dongle.wait_for("disconnecting idle central", timeout=2)
    finally:
        dongle.stop()


# ---------------------------------------------------------------- start-up calls that could block

ROLES = {"peripheral": (["--role", "peripheral"], 0), "central": (["--role", "central", "--question", "Blocked?"], 143)}


@pytest.mark.parametrize("kind", ["fifo", "device"])
@pytest.mark.parametrize("role", ROLES)
def test_btsnoop_that_is_not_a_regular_file_is_refused_at_once(role, kind, tmp_path):
    # A FIFO held open(2) until a reader came, with SIGTERM ignored (killed after
    # 150 s); a device (/dev/full) cannot be cut back to a whole record. One line, exit 2.
    path = str(tmp_path / "live.btsnoop")
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path = "/dev/full"
    what = "a FIFO (named pipe)" if kind == "fifo" else "a character device"
    # Port 1 refuses: the file is refused before the transport is opened.
    run = Dongle(*ROLES[role][0], "--transport", "tcp:127.0.0.1:1", "--btsnoop", path)
    try:
        assert run.wait_exit(5) == 2, run.log
        assert run.log == f"itcb-dongle: error: cannot write btsnoop file {path}: it is {what}, not a regular file", run.log
    finally:
        run.stop()


@pytest.mark.parametrize("role", ROLES)
def test_firmware_file_that_is_a_fifo_is_refused_at_once(role, tmp_path):
    # The probe (--firmware-dir on TCP) finds a Broadcom chip whose .hcd is a FIFO:
    # read blocking, it held the start until a writer came; now one line, exit 4.
    os.makedirs(tmp_path / "brcm")
    fifo = tmp_path / "brcm" / "BCM43430A1.hcd"
    os.mkfifo(fifo)
    emulation = VendorEmulation("bcm43430a1", str(tmp_path / "fifo.hex"))
    run = Dongle(*ROLES[role][0], "--transport", f"tcp:127.0.0.1:{emulation.ports[0]}", "--firmware-dir", str(tmp_path))
    try:
        assert run.wait_exit(20) == 4, run.log
        assert run.log.splitlines()[-1] == ("itcb-dongle: error: Broadcom BCM43430A1: firmware file "
                                            f"{fifo} is a FIFO (named pipe), not a regular file"), run.log
        assert "missing" not in run.log
    finally:
        run.stop()
        emulation.stop()


class FullBacklog:
    """A listener that never accepts, its queue filled by connections of our own:
    the kernel drops further SYNs, so a connect hangs (it would retry for 130 s)."""

    def __init__(self):
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(0)
        self.port = self.listener.getsockname()[1]
        self.fillers = []
        while True:
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", self.port))
            self.fillers.append(s)
            if not select.select([], [s], [], 0.5)[1]:
                break  # this one hangs: the queue is full
            assert len(self.fillers) < 10, "the backlog never filled"

    def close(self):
        for s in [self.listener, *self.fillers]:
            s.close()


def socket_inodes_in_syn_sent(pid, port):
    """The process's sockets that are connecting (SYN_SENT) to 127.0.0.1:`port`."""
    mine = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            mine.add(target[8:-1])
    found = []
    with open("/proc/net/tcp") as table:
        for row in list(table)[1:]:
            fields = row.split()
            remote_port, state, inode = int(fields[2].split(":")[1], 16), fields[3], fields[9]
            if remote_port == port and state == "02" and inode in mine:
                found.append(inode)
    return found


@pytest.mark.parametrize("role", ROLES)
def test_sigterm_ends_a_connect_to_a_host_that_drops_syns_within_a_second(role):
    # A blocking connect(2), restarted after the handler (SA_RESTART), held
    # SIGTERM off for 130 s: under systemd a stop timeout and a SIGKILL.
    backlog = FullBacklog()
    args, code = ROLES[role]
    run = Dongle(*args, "--transport", f"tcp:127.0.0.1:{backlog.port}")
    try:
        deadline = time.time() + 10
        while not socket_inodes_in_syn_sent(run.process.pid, backlog.port):
            assert time.time() < deadline and run.process.poll() is None, f"never seen connecting; log:\n{run.log}"
            time.sleep(0.02)
        stopping = time.time()
        run.process.send_signal(signal.SIGTERM)
        assert run.wait_exit(5) == code, run.log
        took = time.time() - stopping
        assert took < 1.0, f"SIGTERM took {took:.2f} s"
        assert "error" not in run.log, run.log
    finally:
        run.stop()
        backlog.close()


def test_connect_to_a_host_that_drops_syns_gives_up_after_5_s():
    backlog = FullBacklog()
    run = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{backlog.port}")
    try:
        started = time.time()
        assert run.wait_exit(30) == 3, run.log
        took = time.time() - started
        assert 5.0 <= took < 15.0, took  # its own 5 s, not the kernel's 130 s
        assert run.log == (f"itcb-dongle: error: cannot connect to controller at 127.0.0.1:{backlog.port}: "
                           "no answer within 5 s (is the virtual controller running?)"), run.log
    finally:
        run.stop()
        backlog.close()
