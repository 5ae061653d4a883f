"""Text heard over the air never reaches a terminal or the journal raw: a
hostile Bumble 8-Ball (names, GAP Device Name and answers full of escape
sequences, forged lines, C1 and bidi controls, invalid UTF-8) against our
central in every output mode, and hostile questions against our peripheral.
What is printed shows those bytes as visible escapes (docs/ARCHITECTURE.md,
"Untrusted text"); --json carries them in JSON's own escaping."""
import json
import subprocess

from harness import BINARY, Dongle
from test_central import BumblePeripheral

# The name from the hostile-peer report: clears the screen, then forges a line.
FORGED_NAME = "E\x1b[2J\nitcb-dongle: error: X"
FORGED_NAME_SHOWN = "E\\x1b[2J\\x0aitcb-dongle: error: X"
# An answer that paints the terminal, with a C1 CSI and a bidi override.
HOSTILE_ANSWER = "\x1b[31mRED\x1b[0m\u009b2J\u202etxt"
HOSTILE_ANSWER_SHOWN = "\\x1b[31mRED\\x1b[0m\\u009b2J\\u202etxt"
BIDI = {0x061C, 0x200E, 0x200F, *range(0x2028, 0x202F), *range(0x2066, 0x206A)}


def assert_printable(output: bytes, what, json_lines=False):
    """No raw control byte (but newline and --scan's tabs), no C1 or bidi
    control, valid UTF-8; on stderr every line is one of ours."""
    text = output.decode("utf-8")  # raises on invalid UTF-8
    for line in text.splitlines():
        bad = [c for c in line if (ord(c) < 0x20 and c != "\t") or 0x7F <= ord(c) <= 0x9F or ord(c) in BIDI]
        assert not bad, f"{what}: raw {bad!r} in {line!r}"
        if what == "stderr":
            assert line.startswith("itcb-dongle: "), f"a line that is not ours: {line!r}"
        if json_lines:
            json.loads(line)
    return text


def central(port, *args):
    result = subprocess.run([BINARY, "--role", "central", "--transport", f"tcp:127.0.0.1:{port}", *args],
                            capture_output=True, timeout=120)
    return (result.returncode, assert_printable(result.stdout, "stdout", json_lines="--json" in args),
            assert_printable(result.stderr, "stderr"))


def test_hostile_names_and_answers_are_escaped_in_every_output_mode(link):
    forged = BumblePeripheral(link.ports[1], "--name", FORGED_NAME, "--address", "C1:11:11:11:11:11",
                              "--answer-hex", HOSTILE_ANSWER.encode().hex())
    # Invalid UTF-8 in the advertised name; a hostile GAP Device Name behind a shortened one.
    broken = BumblePeripheral(link.ports[2], "--name-hex", "ff41c3", "--address", "C2:22:22:22:22:22")
    shortened = BumblePeripheral(link.ports[3], "--name", "Short", "--shortened", "--address", "C3:33:33:33:33:33",
                                 "--device-name", "Short\u202eevil\x1b]0;title\x07\r\nitcb-dongle: error: Y")
    try:
        # --scan, text: each 8-Ball on its line, its name escaped.
        code, out, _ = central(link.ports[0], "--scan", "--timeout", "3")
        assert code == 0
        names = sorted(line.split("\t")[0] for line in out.splitlines())
        assert names == sorted([FORGED_NAME_SHOWN, "\\xffA\\xc3", "Short (shortened)"]), out
        # --scan --json: valid JSON, the name as it was heard (JSON's escaping).
        code, out, _ = central(link.ports[0], "--scan", "--timeout", "3", "--json")
        assert code == 0
        assert FORGED_NAME in [json.loads(line)["name"] for line in out.splitlines()]
        # A question: the answer painted nothing; the log names the 8-Ball escaped.
        code, out, err = central(link.ports[0], "--peer", "C1:11:11:11:11:11", "--question", "Hostile?",
                                 "--log-level", "info")
        assert code == 0, err
        assert out == f"Hostile? -> {HOSTILE_ANSWER_SHOWN}\n"
        assert f'found 8-Ball "{FORGED_NAME_SHOWN}"' in err
        code, out, _ = central(link.ports[0], "--peer", "C1:11:11:11:11:11", "--question", "Hostile?", "--json")
        assert code == 0 and json.loads(out)["phrase"] == HOSTILE_ANSWER and json.loads(out)["peer"] == FORGED_NAME
        # The GAP Device Name read over GATT, in the log.
        code, out, err = central(link.ports[0], "--peer", "Short", "--question", "Named?", "--log-level", "info")
        assert code == 0, err
        assert 'full name (GAP Device Name) is "Short\\u202eevil\\x1b]0;title\\x07\\x0d\\x0aitcb-dongle: error: Y"' \
            in err, err
        # --peer not found: the seen: lines, every name escaped.
        code, out, err = central(link.ports[0], "--peer", "nobody", "--question", "Where?", "--timeout", "3")
        assert code == 6 and out == ""
        assert f'seen: "{FORGED_NAME_SHOWN}" C1:11:11:11:11:11' in err, err
        assert 'seen: "\\xffA\\xc3" C2:22:22:22:22:22' in err, err
        code, out, err = central(link.ports[0], "--peer", "nobody", "--question", "Where?", "--timeout", "3", "--json")
        assert code == 6 and json.loads(out)["error"] == "not_found"
    finally:
        forged.stop()
        broken.stop()
        shortened.stop()


def test_hostile_questions_are_escaped_in_the_peripherals_log(link):
    ours = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{link.ports[1]}", "--name", "Desk8")
    try:
        ours.wait_for("advertising")
        asked = "Is \x1b[2J\u009b31m\u202eit\\x1b?"
        code, out, err = central(link.ports[0], "--peer", "Desk8", "--question", asked,
                                 "--question", "Not\x1b[0m\u2066 a question")
        assert code == 5, err
        assert out.splitlines()[0].startswith("Is \\x1b[2J\\u009b31m\\u202eit\\\\x1b? -> ")
        ours.wait_for("rejected from ")
        shown = [line for _, line in ours.lines if "info: answer to " in line or "info: rejected from " in line]
        assert len(shown) == 2, ours.log
        assert ': "Is \\x1b[2J\\u009b31m\\u202eit\\\\x1b?" -> ' in shown[0], shown
        assert ': "Not\\x1b[0m\\u2066 a question" is not a question' in shown[1], shown
        assert_printable("\n".join(line for _, line in ours.lines).encode(), "stderr")
    finally:
        ours.stop()


def test_scan_lists_every_eight_ball_in_a_crowded_hall():
    """20 8-Balls advertising, then a real one that starts 5 s later: --scan
    lists all 21, each once (it used to stop at 16, silently)."""
    import os
    import sys
    import time
    from harness import REPO, Controllers, Logged, stop_process

    hall = Controllers(22)
    crowd = Logged([sys.executable, os.path.join(REPO, "Tests", "PythonSupport", "crowd.py"),
                    *map(str, hall.ports[1:21])])
    scan = late = None
    try:
        crowd.wait_for("READY", timeout=60)
        scan = Logged([BINARY, "--role", "central", "--transport", f"tcp:127.0.0.1:{hall.ports[0]}", "--scan"])
        crowd_names = {f"Crowd {i:02d}" for i in range(1, 21)}
        deadline = time.time() + 30
        while time.time() < deadline and not crowd_names <= {line.split("\t")[0] for _, line in scan.lines}:
            time.sleep(0.1)
        time.sleep(5)
        late = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{hall.ports[21]}", "--name", "Late8")
        scan.wait_for("Late8\t", timeout=30)
        stop_process(scan.process)
        listed = [line.split("\t")[0] for _, line in scan.lines if "\t" in line]
        assert sorted(listed) == sorted(crowd_names | {"Late8"}), scan.log
    finally:
        for process in (scan, late, crowd):
            if process is not None:
                stop_process(process.process)
        hall.stop()
