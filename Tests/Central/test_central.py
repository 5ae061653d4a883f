"""Our central (issue 3) against a Bumble 8-Ball peripheral and against our own
peripheral, all over Bumble virtual controllers."""
import json
import os
import subprocess
import sys
import time

from harness import BINARY, REPO, SLUGS, Dongle, stop_process

BUMBLE_8BALL = os.path.join(REPO, "Tests", "Support", "bumble_8ball.py")
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
        result = central(link.ports[0], "--question", "Anyone?", "--timeout", "3")
        assert result.returncode == 6 and "no 8-Ball found" in result.stderr
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
        assert ours.wait_count("answer on", 100) == 100
        # One connection served all of them.
        assert ours.wait_count("info: disconnected:", 1) == 1 and ours.count("info: connected:") == 1
    finally:
        ours.stop()


def test_long_question_uses_prepared_writes(link):
    ours = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{link.ports[1]}", "--name", "Ours")
    try:
        ours.wait_for("advertising")
        question = "x" * 299 + "?"
        result = central(link.ports[0], "--question", question)
        assert result.returncode == 0, result.stderr
        assert result.stdout.split(" -> ")[1].strip() in PHRASES
        assert ours.count(question) == 1
    finally:
        ours.stop()
