"""Our central against a Bumble 8-Ball peripheral and against our own
peripheral, all over Bumble virtual controllers."""
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import threading
import time

import pytest
from harness import BINARY, REPO, SLUGS, Dongle, stop_process, unit_command

import air_figures

BUMBLE_8BALL = os.path.join(REPO, "Tests", "PythonSupport", "bumble_8ball.py")
PHRASES = {
    "It is certain.", "It is decidedly so.", "Without a doubt.", "Yes – definitely.", "You may rely on it.",
    "As I see it, yes.", "Most likely.", "Outlook good.", "Yes.", "Signs point to yes.", "Reply hazy, try again.",
    "Ask again later.", "Better not tell you now.", "Cannot predict now.", "Concentrate and ask again.",
    "Don’t count on it.", "My reply is no.", "My sources say no.", "Outlook not so good.", "Very doubtful.",
}


class BumblePeripheral:
    def __init__(self, port, *args):
        self.process = subprocess.Popen([sys.executable, BUMBLE_8BALL, "--transport", f"tcp-client:127.0.0.1:{port}",
                                         *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        start_new_session=True)
        line = self.process.stdout.readline()
        assert line.strip() == "READY", f"Bumble 8-Ball did not start: {line!r}"

    def stop(self):
        stop_process(self.process)


def central(port, *args, stdin=None, timeout=120):
    return subprocess.run([BINARY, "--role", "central", "--transport", f"tcp:127.0.0.1:{port}", *args],
                          input=stdin, capture_output=True, text=True, timeout=timeout)


def test_twenty_questions_against_bumble_peripheral(link):
    peer = BumblePeripheral(link.ports[1], "--name", "B8")
    try:
        result = central(link.ports[0], "--question", "Will it work?", "--count", "20", "--json")
        assert result.returncode == 0, result.stderr
        answers = [json.loads(line) for line in result.stdout.splitlines()]
        assert len(answers) == 20
        for a in answers:
            assert a["slug"] in SLUGS and a["phrase"] in PHRASES and a["peer"] == "B8"
            assert a["question"] == "Will it work?" and a["rssi"] == -50 and a["latency_ms"] >= 0
    finally:
        peer.stop()


def test_non_question_is_reported_as_rephrase(link):
    peer = BumblePeripheral(link.ports[1], "--name", "B8")
    try:
        result = central(link.ports[0], "--question", "Is this fine?", "--question", "Tell me")
        assert result.returncode == 5, result.stderr
        lines = result.stdout.splitlines()
        assert lines[0].startswith("Is this fine? -> ") and lines[0].split(" -> ")[1] in PHRASES
        assert lines[1] == "Tell me -> please rephrase as a question"
    finally:
        peer.stop()


def test_advertisers_without_uuid_or_name_are_ignored(link):
    no_uuid = BumblePeripheral(link.ports[1], "--name", "NoUuid", "--no-uuid", "--address", "C1:11:11:11:11:11")
    no_name = BumblePeripheral(link.ports[2], "--no-name", "--address", "C2:22:22:22:22:22")
    try:
        result = central(link.ports[0], "--scan", "--timeout", "3")
        assert result.returncode == 6, (result.stdout, result.stderr)
        assert result.stdout == ""
        # Nothing found is said, with what was seen and why it was passed over.
        assert "no 8-Ball found within 3 s" in result.stderr
        assert 'seen: "NoUuid" C1:11:11:11:11:11 -50 dBm: not an 8-Ball (no 8-Ball service)' in result.stderr
        assert "seen: (no name) C2:22:22:22:22:22 -50 dBm: an 8-Ball service but no name" in result.stderr
        assert "8E38140A" not in result.stderr
        # --json: one object per line in every outcome, "nothing found" included.
        result = central(link.ports[0], "--scan", "--timeout", "3", "--json")
        assert result.returncode == 6
        [record] = [json.loads(line) for line in result.stdout.splitlines()]
        assert record["error"] == "not_found" and record["exit"] == 6
        assert record["message"].startswith("no 8-Ball found within 3 s")
        result = central(link.ports[0], "--question", "Anyone?", "--timeout", "3", "--json")
        assert result.returncode == 6
        [record] = [json.loads(line) for line in result.stdout.splitlines()]
        assert record["error"] == "not_found" and record["exit"] == 6
        result = central(link.ports[0], "--question", "Anyone?", "--timeout", "3")
        assert result.returncode == 6 and "no 8-Ball found" in result.stderr
        assert 'seen: "NoUuid"' in result.stderr
        good = BumblePeripheral(link.ports[3], "--name", "Good8", "--address", "C3:33:33:33:33:33")
        try:
            result = central(link.ports[0], "--scan", "--timeout", "3", "--json")
            assert result.returncode == 0, result.stderr
            found = [json.loads(line) for line in result.stdout.splitlines()]
            assert [(f["name"], f["address"]) for f in found] == [("Good8", "C3:33:33:33:33:33")]
            result = central(link.ports[0], "--question", "You?")
            assert result.returncode == 0 and result.stdout.startswith("You? -> ")
        finally:
            good.stop()
    finally:
        no_uuid.stop()
        no_name.stop()


def test_rssi_window_below_virtual_controller_finds_nothing(link):
    peer = BumblePeripheral(link.ports[1], "--name", "B8")
    try:
        # Bumble reports every advertiser at -50 dBm.
        result = central(link.ports[0], "--question", "Near?", "--rssi-max", "-55", "--timeout", "3")
        assert result.returncode == 6, result.stderr
        assert "no 8-Ball found" in result.stderr
        assert "signal from -60 to -55 dBm" in result.stderr
        assert 'seen: "B8" C4:B5:A6:97:88:79 -50 dBm: signal outside -60…-55 dBm' in result.stderr
        result = central(link.ports[0], "--question", "Near?", "--rssi-min", "-45", "--rssi-max", "-20", "--timeout", "3")
        assert result.returncode == 6
        result = central(link.ports[0], "--question", "Near?", "--rssi-min", "-50", "--rssi-max", "-50")
        assert result.returncode == 0, result.stderr
    finally:
        peer.stop()


def test_silent_peripheral_is_device_offline(link):
    peer = BumblePeripheral(link.ports[1], "--name", "Mute", "--silent")
    try:
        started = time.time()
        result = central(link.ports[0], "--question", "Hello?", "--timeout", "2", "--json")
        assert result.returncode == 7, result.stderr
        record = json.loads(result.stdout.splitlines()[0])
        assert record["error"] == "offline" and record["message"] == "device offline"
        assert time.time() - started < 30
    finally:
        peer.stop()


def test_peer_selects_one_eight_ball(link):
    first = BumblePeripheral(link.ports[1], "--name", "Alpha", "--address", "C5:55:55:55:55:55")
    second = BumblePeripheral(link.ports[2], "--name", "Beta", "--address", "C6:66:66:66:66:66")
    try:
        for peer in ("Beta", "C5:55:55:55:55:55"):
            result = central(link.ports[0], "--question", "Which?", "--peer", peer, "--json")
            assert result.returncode == 0, result.stderr
            record = json.loads(result.stdout)
            assert peer in (record["peer"], record["address"])
        # Names match in any case.
        result = central(link.ports[0], "--question", "Which?", "--peer", "bETA", "--json")
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["peer"] == "Beta"
        # A name nobody has: said what was looked for, and who was seen instead.
        result = central(link.ports[0], "--question", "Which?", "--peer", "Gamma", "--timeout", "3")
        assert result.returncode == 6
        assert 'named "Gamma" (any case)' in result.stderr
        assert 'seen: "Alpha" C5:55:55:55:55:55 -50 dBm: not named "Gamma"' in result.stderr
    finally:
        first.stop()
        second.stop()


def test_stdin_questions(link):
    peer = BumblePeripheral(link.ports[1], "--name", "B8")
    try:
        result = central(link.ports[0], stdin="First?\n\nSecond?\nThird\n")
        assert result.returncode == 5, result.stderr
        lines = result.stdout.splitlines()
        assert [l.split(" -> ")[0] for l in lines] == ["First?", "Second?", "Third"]
        assert lines[2].endswith("please rephrase as a question")
        # Piped stdin: no prompt.
        assert "Ask the 8-Ball" not in result.stderr
    finally:
        peer.stop()


def test_hundred_questions_our_central_against_our_peripheral(link):
    ours = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{link.ports[1]}", "--name", "Ours",
                  "--log-level", "info")
    try:
        ours.wait_for("advertising")
        result = central(link.ports[0], "--question", "Again?", "--count", "100", "--json", timeout=300)
        assert result.returncode == 0, result.stderr[-2000:]
        records = [json.loads(line) for line in result.stdout.splitlines()]
        assert len(records) == 100
        assert all(r["slug"] in SLUGS and r["phrase"] in PHRASES for r in records)
        assert ours.wait_count("info: answer to ", 100) == 100
        # One connection served all of them.
        assert ours.wait_count("info: disconnected:", 1) == 1 and ours.count("info: connected:") == 1
    finally:
        ours.stop()


def att_pdus_sent_and_received(snoop):
    """The central's own capture: (direction, ATT bytes) of every ATT PDU, "out" = ours."""
    return [(p["direction"], p["att"]) for p in air_figures.att_pdus(snoop)]


def ask_bumble_the_longest_question(link, tmp_path, mtu, *peer_options):
    """Our central asks a Bumble 8-Ball the longest question (512 bytes); returns
    the ATT PDUs of its capture once the answer and the MTU are as expected."""
    peer = BumblePeripheral(link.ports[1], "--name", "B8", *peer_options)
    snoop = str(tmp_path / "central.btsnoop")
    try:
        result = central(link.ports[0], "--question", LONGEST_QUESTION, "--log-level", "info", "--btsnoop", snoop)
        assert result.returncode == 0, result.stderr
        assert result.stdout.split(" -> ")[1].strip() in PHRASES
        assert f"8-Ball ready (MTU {mtu})" in result.stderr
    finally:
        peer.stop()
    return att_pdus_sent_and_received(snoop)


LONGEST_QUESTION = "x" * 511 + "?"


def test_our_central_asks_for_mtu_517_and_writes_512_bytes_at_once(link, tmp_path):
    # Our central asks for ATT MTU 517 (Capacity.attMTU on Linux), as Android
    # does; a Bumble 8-Ball grants it, and the longest question (512 bytes)
    # goes in one Write Request, no Prepare Write.
    question = LONGEST_QUESTION
    pdus = ask_bumble_the_longest_question(link, tmp_path, 517)
    assert ("out", bytes([0x02, 0x05, 0x02])) in pdus  # Exchange MTU Request: 517
    assert ("in", bytes([0x03, 0x05, 0x02])) in pdus   # Bumble's Response: 517
    writes = [att for direction, att in pdus if direction == "out" and att[0] in (0x12, 0x16, 0x18)]
    assert [att[3:] for att in writes if len(att) > 5] == [question.encode()]
    assert not any(att[0] in (0x16, 0x18) for att in writes)


def test_long_question_to_our_peripheral_is_one_write(link):
    # Both of ours at MTU 517: the 512-byte question is one Write Request.
    ours = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{link.ports[1]}", "--name", "Ours")
    try:
        ours.wait_for("advertising")
        question = "x" * 511 + "?"
        result = central(link.ports[0], "--question", question)
        assert result.returncode == 0, result.stderr
        assert result.stdout.split(" -> ")[1].strip() in PHRASES
        assert ours.wait_count(question, 1) == 1
        assert "info: MTU 517 " in ours.log
    finally:
        ours.stop()


def test_long_question_uses_prepared_writes(link, tmp_path):
    # Against an 8-Ball that offers 247 (as an iPhone), the same question takes
    # Prepare Writes (242 + 242 + 28 bytes) and an Execute Write.
    writes = [att for direction, att in ask_bumble_the_longest_question(link, tmp_path, 247, "--max-mtu", "247")
              if direction == "out" and att[0] in (0x16, 0x18)]
    assert [len(att) for att in writes] == [247, 247, 33, 2]
    assert b"".join(att[5:] for att in writes[:3]) == LONGEST_QUESTION.encode()


def interrupted_quietly(process, as_json=False):
    """Ctrl-C (SIGINT): exit 130 at once and nothing more on stdout (no made-up
    answer); with --json one object that says so."""
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=5)
    assert process.returncode == 130, err
    if as_json:
        assert [json.loads(line) for line in out.splitlines()] == [
            {"error": "interrupted", "message": "stopped by SIGINT (Ctrl-C)", "exit": 130}]
    else:
        assert out == ""

def test_scan_without_timeout_runs_until_ctrl_c(link):
    peer = BumblePeripheral(link.ports[1], "--name", "Good8", "--address", "C3:33:33:33:33:33")
    try:
        process = subprocess.Popen([BINARY, "--role", "central", "--transport", f"tcp:127.0.0.1:{link.ports[0]}",
                                    "--scan", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            # Printed as it appears, long before any timeout would end the scan.
            first = json.loads(process.stdout.readline())
            assert (first["name"], first["address"]) == ("Good8", "C3:33:33:33:33:33")
            time.sleep(7)  # past the default timeout (5 s): still scanning
            assert process.poll() is None
            interrupted_quietly(process, as_json=True)
        finally:
            if process.poll() is None:
                process.kill()
    finally:
        peer.stop()


def test_scan_that_found_nothing_stopped_by_ctrl_c_is_not_an_error(link):
    # No "error: no 8-Ball found" on the way out of an interrupted scan; --json's
    # one object names the signal.
    for as_json in (False, True):
        process = subprocess.Popen([BINARY, "--role", "central", "--transport", f"tcp:127.0.0.1:{link.ports[0]}",
                                    "--scan", "--log-level", "info", *(["--json"] if as_json else [])],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            # SIGINT once the scan is under way (its info line), not after a guessed delay.
            seen = ""
            deadline = time.time() + 30
            while "scanning for 8-Balls" not in seen and time.time() < deadline and process.poll() is None:
                if select.select([process.stderr], [], [], 0.2)[0]:  # raw reads: nothing left in a buffer
                    seen += os.read(process.stderr.fileno(), 4096).decode(errors="replace")
            assert "scanning for 8-Balls" in seen and process.poll() is None, seen
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=30)
            err = seen + err
            assert process.returncode == 130 and "error" not in err, err
            assert out == ("" if not as_json else
                           '{"error":"interrupted","message":"stopped by SIGINT (Ctrl-C)","exit":130}\n')
        finally:
            if process.poll() is None:
                process.kill()


def test_ctrl_c_mid_session_is_130_without_a_made_up_answer(link):
    peer = BumblePeripheral(link.ports[1], "--name", "B8")
    try:
        process = subprocess.Popen([BINARY, "--role", "central", "--transport", f"tcp:127.0.0.1:{link.ports[0]}"],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            process.stdin.write("First?\n")
            process.stdin.flush()
            assert process.stdout.readline().startswith("First? -> ")
            interrupted_quietly(process)
        finally:
            if process.poll() is None:
                process.kill()
    finally:
        peer.stop()


def test_empty_stdin_is_said(link):
    peer = BumblePeripheral(link.ports[1], "--name", "B8")
    try:
        result = central(link.ports[0], stdin="")
        assert result.returncode == 2
        assert "no questions: standard input was empty" in result.stderr
        result = central(link.ports[0], stdin="\n  \n")
        assert result.returncode == 2
    finally:
        peer.stop()


def wait_until(predicate, timeout, shown):
    """Polls `predicate` for `timeout` seconds; fails with what `shown()` says."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out; {shown()}")


class Terminal:
    """Our central with its stdin on a pseudo-terminal (so it prompts); stdout
    and stderr collected as they come (the prompt has no newline)."""

    def __init__(self, port, *args):
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen([BINARY, "--role", "central", "--transport", f"tcp:127.0.0.1:{port}", *args],
                                        stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        os.close(slave)
        self.out, self.err = b"", b""
        threading.Thread(target=self._read, args=("out",), daemon=True).start()
        threading.Thread(target=self._read, args=("err",), daemon=True).start()

    def _read(self, which):
        stream = self.process.stdout if which == "out" else self.process.stderr
        while True:
            chunk = os.read(stream.fileno(), 4096)
            if not chunk:
                return
            setattr(self, which, getattr(self, which) + chunk)

    def type(self, line):
        os.write(self.master, line.encode() + b"\n")

    def wait(self, predicate, timeout=20.0):
        wait_until(predicate, timeout, lambda: f"stdout:\n{self.out.decode()}\nstderr:\n{self.err.decode()}")

    def prompts(self):
        return self.err.count(b"Ask the 8-Ball: ")

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
        os.close(self.master)


def test_interactive_prompt_offline_and_reconnect(link):
    def ours():
        d = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{link.ports[1]}", "--name", "Ours")
        d.wait_for("advertising")
        return d

    peripheral = ours()
    terminal = Terminal(link.ports[0], "--timeout", "3", "--log-level", "info")
    try:
        # The prompt comes after the log lines, last on the screen.
        terminal.wait(lambda: terminal.prompts() == 1)
        time.sleep(0.5)
        assert b"8-Ball ready" in terminal.err and terminal.err.endswith(b"Ask the 8-Ball: ")
        # An empty line: the prompt again.
        terminal.type("")
        terminal.wait(lambda: terminal.prompts() == 2)
        terminal.type("First?")
        terminal.wait(lambda: b"First? -> " in terminal.out and terminal.prompts() == 3)
        # The 8-Ball goes away: that question is offline, the prompt stays.
        peripheral.stop()
        # Its disconnection is logged, and the prompt comes again below that line.
        terminal.wait(lambda: terminal.prompts() == 4)
        assert terminal.err.endswith(b"\nAsk the 8-Ball: ")
        assert terminal.err.rindex(b"disconnected") < terminal.err.rindex(b"Ask the 8-Ball: ")
        terminal.type("Gone?")
        terminal.wait(lambda: b"Gone? -> device offline" in terminal.out and terminal.prompts() == 5)
        assert terminal.process.poll() is None
        # It comes back: the next question finds it again.
        peripheral = ours()
        terminal.type("Back?")
        terminal.wait(lambda: b"Back? -> " in terminal.out and terminal.prompts() == 6, timeout=30)
        assert b"Back? -> device offline" not in terminal.out
        terminal.process.send_signal(signal.SIGINT)
        assert terminal.process.wait(5) == 130
    finally:
        terminal.stop()
        peripheral.stop()


# --- the full name from the scan response; the prompt's line ------------------------

def test_long_name_is_found_by_its_full_name_from_the_scan_response(link):
    name = "Kiosk in the lobby"  # 18 bytes: advertised as "Kiosk in", whole in the scan response
    ours = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{link.ports[1]}", "--name", name)
    try:
        ours.wait_for("advertising")
        assert 'the advertising data carries the name shortened to "Kiosk in"; the scan response carries the full name' \
            in ours.log
        result = central(link.ports[0], "--scan", "--timeout", "3", "--json")
        assert result.returncode == 0, result.stderr
        assert [json.loads(line)["name"] for line in result.stdout.splitlines()] == [name]
        result = central(link.ports[0], "--peer", "kiosk in the lobby", "--question", "Found me?", "--json")
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["peer"] == name
    finally:
        ours.stop()


def test_the_peripherals_log_is_an_operators(link):
    """The answer and rejection lines carry the asker's address, the
    question's text and the answer's phrase (not a handle and a slug); the
    advertising stop/restart around each connection stays out of info; Ctrl-C
    does not log the links it closes as centrals hanging up."""
    asker = ["--peer", "Desk8", "--address", "C4:44:44:44:44:44"]
    ours = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{link.ports[1]}", "--name", "Desk8")
    process = None
    try:
        ours.wait_for("advertising")
        for _ in range(2):  # two connections, one after the other
            result = central(link.ports[0], *asker, "--question", "Will it rain?", "--question", "Tell me")
            assert result.returncode == 5, result.stderr
        assert ours.wait_count("info: rejected from ", 2) == 2, ours.log
        prefix = 'itcb-dongle: info: answer to C4:44:44:44:44:44: "Will it rain?" -> '
        answers = [line for _, line in ours.lines if "info: answer to " in line]
        assert len(answers) == 2 and all(a.startswith(prefix) and a[len(prefix):] in PHRASES for a in answers), ours.log
        assert ours.count('itcb-dongle: info: rejected from C4:44:44:44:44:44: "Tell me" is not a question '
                          "-> ATT error 0x0E (please rephrase as a question)") == 2, ours.log
        assert ours.count("info: advertising") == 1 and ours.count("debug: advertising") == 0, ours.log
        # A central still connected (it waits on standard input) when the peripheral is stopped.
        process = subprocess.Popen([BINARY, "--role", "central", "--transport", f"tcp:127.0.0.1:{link.ports[0]}", *asker],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)
        process.stdin.write("Still there?\n")
        process.stdin.flush()
        assert " -> " in process.stdout.readline()
        ours.process.send_signal(signal.SIGINT)
        assert ours.wait_exit(10) == 0
        # The two askers that left said so (0x13 from their side); the link Ctrl-C closed is ours.
        stopping = ours.log[ours.log.index("info: stopping"):]
        assert "closed by this side on stopping" in stopping and "remote user terminated" not in stopping, ours.log
    finally:
        ours.stop()
        if process is not None:
            stop_process(process)


def test_name_past_29_bytes_is_found_by_its_full_name(link):
    """Past 29 bytes the name is shortened in the scan response too;
    --scan marks it, --peer finds the full name (read as the GAP Device Name)
    and --json reports it, and an 8-Ball with the same 29 bytes but another
    full name is passed over, with the reason."""
    hall_b = "The kiosk by the north entrance of hall B"  # 41 bytes
    hall_c = "The kiosk by the north entrance of hall C"
    b = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{link.ports[1]}", "--name", hall_b,
               "--address", "D1:11:11:11:11:11")
    c = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{link.ports[2]}", "--name", hall_c,
               "--address", "D2:22:22:22:22:22")
    try:
        b.wait_for("advertising")
        c.wait_for("advertising")
        result = central(link.ports[0], "--scan", "--timeout", "3", "--json")
        assert result.returncode == 0, result.stderr
        found = sorted((o["address"], o["name"], o["shortened"]) for o in map(json.loads, result.stdout.splitlines()))
        assert found == [("D1:11:11:11:11:11", hall_b[:29], True), ("D2:22:22:22:22:22", hall_c[:29], True)]
        result = central(link.ports[0], "--scan", "--timeout", "3")
        assert sorted(line.split("\t")[0] for line in result.stdout.splitlines()) == [f"{hall_b[:29]} (shortened)"] * 2
        for name, address in ((hall_b, "D1:11:11:11:11:11"), (hall_c.upper(), "D2:22:22:22:22:22")):
            result = central(link.ports[0], "--peer", name, "--question", "Found me?", "--json")
            assert result.returncode == 0, result.stderr
            answer = json.loads(result.stdout)
            assert (answer["peer"].upper(), answer["address"]) == (name.upper(), address), answer
        b.stop()
        result = central(link.ports[0], "--peer", hall_b, "--question", "Still here?")
        assert result.returncode == 6, result.stderr
        assert f'its full name, read over GATT, is "{hall_c}"' in result.stderr, result.stderr
    finally:
        b.stop()
        c.stop()


class Screen:
    """Our central on a pseudo-terminal for stdin, stdout and stderr together, as
    a user sees it: the echo of what is typed, answers, the prompt, log lines."""

    def __init__(self, port, *args):
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen([BINARY, "--role", "central", "--transport", f"tcp:127.0.0.1:{port}", *args],
                                        stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
        os.close(slave)
        self.raw = b""
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:
                return
            if not chunk:
                return
            self.raw += chunk

    @property
    def text(self):
        return self.raw.replace(b"\r\n", b"\n").decode(errors="replace")

    def type(self, data):
        os.write(self.master, data)

    def wait(self, predicate, timeout=20.0):
        wait_until(predicate, timeout, lambda: f"screen:\n{self.text}")

    def wait_exit(self, timeout=10):
        """The exit code, once everything the process wrote is on the screen (the pty reads EOF)."""
        code = self.process.wait(timeout)
        self.reader.join(5)
        return code

    def prompts(self):
        return self.text.count("Ask the 8-Ball: ")

    def assert_prompt_never_shares_its_line(self):
        for line in self.text.splitlines():
            assert not re.match(r"Ask the 8-Ball: (Ask the 8-Ball: |itcb-dongle: )", line), self.text

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)
        os.close(self.master)


@pytest.mark.parametrize("levels", [[], ["--log-level", "info"]], ids=["default", "info"])
def test_prompt_once_logs_on_their_own_lines_and_ctrl_d_after_a_rejection_is_0(link, levels):
    peripheral = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{link.ports[1]}", "--name", "Ours")
    screen = None
    try:
        peripheral.wait_for("advertising")
        screen = Screen(link.ports[0], "--timeout", "3", *levels)
        screen.wait(lambda: screen.prompts() == 1)
        screen.type(b"Tell me\n")
        screen.wait(lambda: "Tell me -> please rephrase as a question" in screen.text and screen.prompts() == 2)
        # The 8-Ball goes away while the prompt waits: the log lines start their own
        # lines, a warning says the next question looks again, the prompt comes back once.
        peripheral.stop()
        screen.wait(lambda: "warning: the 8-Ball disconnected; the next question looks for it again" in screen.text)
        screen.wait(lambda: screen.text.endswith("Ask the 8-Ball: "))
        screen.assert_prompt_never_shares_its_line()
        # Ctrl-D on the prompt's line: the shutdown's log lines go below it, and the
        # session ends with 0 although a question was rejected (its outcome was shown).
        screen.type(b"\x04")
        assert screen.wait_exit() == 0, screen.text
        screen.assert_prompt_never_shares_its_line()
        assert screen.prompts() >= 3 and "Ask the 8-Ball: Ask the 8-Ball: " not in screen.text
    finally:
        if screen:
            screen.stop()
        peripheral.stop()


def test_central_through_the_units_command_line_asks_a_question_with_spaces(link, tmp_path):
    """The unit's ExecStart with ITCB_ROLE=central and ITCB_QUESTION="Will it
    rain?": the answer, and no warning about the
    peripheral's options. The unit's metrics file (the central writes one too)
    goes where the service's state directory would be: here, a temporary one."""
    peer = BumblePeripheral(link.ports[1], "--name", "B8")
    try:
        words, env = unit_command("central", ITCB_QUESTION="Will it rain?",
                                  ITCB_METRICS_FILE=str(tmp_path / "1-1.prom"))
        words = [BINARY] + [f"tcp:127.0.0.1:{link.ports[0]}" if w == "usb:1-1" else w for w in words[1:]]
        result = subprocess.run(words, capture_output=True, text=True, timeout=60, env={**os.environ, **env})
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("Will it rain? -> "), result.stdout
        assert "warning" not in result.stderr, result.stderr
        assert re.search(r"^itcb_dongle_up\{[^}]*\} 0$", (tmp_path / "1-1.prom").read_text(), re.M)
    finally:
        peer.stop()


def test_ctrl_c_on_the_prompt_ends_its_line(link):
    peripheral = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{link.ports[1]}", "--name", "Ours")
    screen = None
    try:
        peripheral.wait_for("advertising")
        screen = Screen(link.ports[0], "--log-level", "info")
        screen.wait(lambda: screen.text.endswith("Ask the 8-Ball: "))
        screen.process.send_signal(signal.SIGINT)
        assert screen.wait_exit() == 130, screen.text
        screen.assert_prompt_never_shares_its_line()
        assert "Ask the 8-Ball: \n" in screen.text and screen.text.endswith("\n"), screen.text
    finally:
        if screen:
            screen.stop()
        peripheral.stop()


# --- --timeout bounds the whole question; --peer never guesses ----------------------

# docs/COMMAND-LINE.md, "--timeout": exit 7 within S plus this margin (closing the
# link, resetting the controller; measured from the process's start here, so
# the controller's bring-up over TCP is in it too).
TIMEOUT_MARGIN = 1.0


def timed_central(port, *args):
    started = time.monotonic()
    result = central(port, *args)
    return result, time.monotonic() - started


@pytest.mark.parametrize("step", ["mtu", "discovery", "answer"])
def test_timeout_bounds_the_whole_question_against_a_frozen_peripheral(link, step):
    """A peripheral whose host stops answering ATT at `step` (its controller keeps
    the link up): "device offline", exit 7, within --timeout plus the margin,
    not at the ATT transaction timeout (30 s)."""
    peer = BumblePeripheral(link.ports[1], "--name", "Frozen", "--freeze-at", step)
    try:
        # 4 s: time for a loaded machine's Bumble to reach the step before the deadline.
        result, took = timed_central(link.ports[0], "--question", "Are you there?", "--timeout", "4", "--json",
                                     "--log-level", "debug")
        assert result.returncode == 7, result.stderr
        assert json.loads(result.stdout) == {"question": "Are you there?", "error": "offline", "message": "device offline",
                                             "peer": "Frozen", "address": "C4:B5:A6:97:88:79"}
        assert took < 4 + TIMEOUT_MARGIN, took
        # It froze where asked, not earlier (the line is there by now, or never).
        assert select.select([peer.process.stdout], [], [], 1)[0], f"the 8-Ball never froze:\n{result.stderr}"
        assert peer.process.stdout.readline().strip() == f"FROZEN at {step}"
    finally:
        peer.stop()


def test_timeout_against_our_peripheral_stopped_with_sigstop(link):
    """Our 8-Ball stopped with SIGSTOP (its controller still
    advertises and connects): --timeout 3 ends with 7 within 3 s plus the margin."""
    ours = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{link.ports[1]}", "--name", "Ours")
    try:
        ours.wait_for("advertising")
        ours.process.send_signal(signal.SIGSTOP)
        result, took = timed_central(link.ports[0], "--question", "Are you there?", "--timeout", "3")
        assert result.returncode == 7, result.stderr
        assert result.stdout == "Are you there? -> device offline\n"
        assert took < 3 + TIMEOUT_MARGIN, took
    finally:
        ours.process.send_signal(signal.SIGCONT)
        ours.stop()


def test_ambiguous_peer_name_is_refused_with_the_candidates(link):
    """Two 8-Balls whose names past 29 bytes share the shortened name --scan
    lists: --peer with that name is refused (exit 6, both listed, none asked);
    each full name, or an address, picks one."""
    first, second = "the magic 8-ball in the lobby, first floor", "the magic 8-ball in the lobby, second floor"
    shortened = first[:29]
    assert shortened == second[:29] == "the magic 8-ball in the lobby"
    a = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{link.ports[1]}", "--name", first,
               "--address", "D1:11:11:11:11:11", "--log-level", "info")
    b = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{link.ports[2]}", "--name", second,
               "--address", "D2:22:22:22:22:22", "--log-level", "info")
    try:
        a.wait_for("advertising")
        b.wait_for("advertising")
        for attempt in range(2):
            result = central(link.ports[0], "--peer", shortened, "--question", "Which one?")
            assert result.returncode == 6, result.stderr
            assert result.stdout == ""
            assert (f'error: --peer "{shortened}" matches 2 8-Balls, so none was asked; give the one you mean by its '
                    "address (--peer ADDRESS) or its full name") in result.stderr
            for address in ("D1:11:11:11:11:11", "D2:22:22:22:22:22"):
                assert f'error: candidate: "{shortened}" (shortened) {address} -50 dBm' in result.stderr, result.stderr
        result = central(link.ports[0], "--peer", shortened.upper(), "--question", "Which one?", "--json")
        assert result.returncode == 6
        [record] = [json.loads(line) for line in result.stdout.splitlines()]
        assert record["error"] == "ambiguous" and record["exit"] == 6 and "matches 2 8-Balls" in record["message"]
        assert a.count("info: answer to ") == b.count("info: answer to ") == 0  # nobody was asked
        for peer, address in ((second, "D2:22:22:22:22:22"), ("D1:11:11:11:11:11", "D1:11:11:11:11:11")):
            result = central(link.ports[0], "--peer", peer, "--question", "Which one?", "--json")
            assert result.returncode == 0, result.stderr
            assert json.loads(result.stdout)["address"] == address
    finally:
        a.stop()
        b.stop()


def test_two_eight_balls_with_the_same_name_are_not_guessed_between(link):
    one = BumblePeripheral(link.ports[1], "--name", "Kiosk", "--address", "C7:77:77:77:77:77")
    two = BumblePeripheral(link.ports[2], "--name", "KIOSK", "--address", "C8:88:88:88:88:88")
    try:
        result = central(link.ports[0], "--peer", "kiosk", "--question", "You?")
        assert result.returncode == 6, result.stderr
        assert 'error: --peer "kiosk" matches 2 8-Balls, so none was asked; give the one you mean by its address ' \
               "(--peer ADDRESS)\n" in result.stderr
        assert 'error: candidate: "Kiosk" C7:77:77:77:77:77 -50 dBm' in result.stderr
        assert 'error: candidate: "KIOSK" C8:88:88:88:88:88 -50 dBm' in result.stderr
        # --scan lists both; the address picks one.
        result = central(link.ports[0], "--scan", "--timeout", "2", "--json")
        assert sorted(json.loads(line)["address"] for line in result.stdout.splitlines()) == [
            "C7:77:77:77:77:77", "C8:88:88:88:88:88"]
        result = central(link.ports[0], "--peer", "C8:88:88:88:88:88", "--question", "You?", "--json")
        assert result.returncode == 0 and json.loads(result.stdout)["peer"] == "KIOSK"
    finally:
        one.stop()
        two.stop()


def test_scan_judges_the_rssi_window_only_when_given(link):
    """--scan lists whatever it hears (Bumble: -50 dBm) with its RSSI; a window
    given is honoured."""
    peer = BumblePeripheral(link.ports[1], "--name", "B8")
    try:
        result = central(link.ports[0], "--scan", "--timeout", "2", "--rssi-max", "-55")
        assert result.returncode == 6 and "signal outside -60…-55 dBm" in result.stderr, result.stderr
        result = central(link.ports[0], "--scan", "--timeout", "2")
        assert result.returncode == 0 and result.stdout == "B8\tC4:B5:A6:97:88:79\t-50 dBm\n", result.stderr
    finally:
        peer.stop()
