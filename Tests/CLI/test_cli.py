"""The command line a newcomer meets: usage, errors that say what is
wrong, --version, warnings for ignored options, exit codes, and the docs
(README, --help, man page, unit, scripts) agreeing with each other and with
the program. No controller needed: where a run must get past the command
line, it points at a closed TCP port and expects exit 3."""
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest
from harness import BINARY, REPO, unit_command

README = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
DOCS = os.path.join(REPO, "docs")


def read(path):
    return open(os.path.join(REPO, path), encoding="utf-8").read()


def doc(name):
    return open(os.path.join(DOCS, name), encoding="utf-8").read()


COMMAND_LINE = doc("COMMAND-LINE.md")
DEPLOYMENT = doc("DEPLOYMENT.md")


def run(*args, timeout=20, **kwargs):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=timeout, **kwargs)


def docs(*args, env=None):
    """The build-time tool that writes the man page and the completion from the option table
    (`make docs-tool`, quick when it is up to date; the shipped binary has no generator)."""
    subprocess.run(["make", "--no-print-directory", "-s", "docs-tool"], cwd=REPO, check=True, timeout=300)
    return subprocess.run([os.path.join(REPO, ".build", "docs-tool", "itcb-dongle-docs"), *args], capture_output=True,
                          text=True, timeout=20, env={**os.environ, **(env or {})})


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def nowhere():
    return f"tcp:127.0.0.1:{closed_port()}"


# --- usage, typos, --version -------------------------------------------------

def test_no_arguments_prints_usage():
    result = run()
    assert result.returncode == 2
    assert result.stderr.startswith("usage: itcb-dongle --role peripheral")
    assert "--role central" in result.stderr and "--help" in result.stderr
    assert result.stdout == ""
    # README's exit-code table says so (its "one line" is for the errors).
    row = next(line for line in README.splitlines() if line.startswith("| 2 |"))
    assert "one line on stderr" in row and "alone prints its short usage" in row


def test_unknown_option_is_reported_with_a_suggestion():
    result = run("--rol", "peripheral")
    assert result.returncode == 2
    assert result.stderr.strip() == "itcb-dongle: error: unknown option '--rol'; did you mean '--role'? (see --help)"


def test_role_without_flag_is_pointed_at_role():
    for role in ("peripheral", "central"):
        result = run(role)
        assert result.returncode == 2
        assert f"unexpected argument '{role}'; did you mean '--role {role}'?" in result.stderr
        assert "choose a role" not in result.stderr


def test_version_is_the_version_file():
    version = open(os.path.join(REPO, "VERSION")).read().strip()
    result = run("--version")
    assert result.returncode == 0 and result.stdout.strip() == version


def test_missing_role_still_says_choose_a_role():
    result = run("--name", "X")
    assert result.returncode == 2 and "choose a role" in result.stderr
    result = run("--scan")
    assert result.returncode == 2 and "choose a role: add --role central" in result.stderr


# --- values and what is wrong with them ---------------------------------------

@pytest.mark.parametrize("args, expected", [
    (["--role", "central", "--timeout", "-1"], "--timeout must be more than 0 and at most 600 seconds (got -1)"),
    (["--role", "central", "--timeout", "0"], "--timeout must be more than 0 and at most 600 seconds (got 0)"),
    (["--role", "central", "--timeout", "601"], "--timeout must be more than 0 and at most 600 seconds (got 601)"),
    (["--role", "peripheral", "--seed", "-5"], "a seed cannot be negative"),
    (["--role", "central", "--count", "-1"], "--count must be at least 1 (got -1)"),
    (["--role", "central", "--count", "0"], "--count must be at least 1 (got 0)"),
    (["--role", "peripheral", "--max-centrals", "-2"], "--max-centrals must be between 1 and"),
    (["--role", "peripheral", "--health-check", "-1"], "--health-check must be from 0 (off) to 3600 seconds (got -1)"),
])
def test_bad_values_say_what_is_wrong(args, expected):
    result = run(*args)
    assert result.returncode == 2, result.stderr
    assert "Missing value" not in result.stderr
    assert expected in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_timeout_range_as_the_message_says():
    # "more than 0, at most 600": 600 and a fraction pass the command line (then no controller: 3).
    for value in ("600", "0.5"):
        result = run("--role", "central", "--timeout", value, "--question", "Ok?", "--transport", nowhere())
        assert result.returncode == 3, result.stderr


def test_empty_question_is_refused_locally():
    for question in ("", "   "):
        result = run("--role", "central", "--question", question, "--transport", nowhere())
        assert result.returncode == 2
        assert "--question must not be empty" in result.stderr


# --- --name must be UTF-8 --------------------------------------------------------

def test_name_with_invalid_utf8_is_refused():
    for args in ([b"--name", b"Kiosk\xff"], [b"--name=\xc3\x28"]):
        result = subprocess.run([BINARY.encode(), b"--role", b"peripheral", *args, b"--transport",
                                 nowhere().encode()], capture_output=True, timeout=20)
        assert result.returncode == 2, result.stderr
        assert b"--name must be valid UTF-8" in result.stderr


def test_name_with_valid_utf8_passes():
    result = run("--role", "peripheral", "--name", "Küche 8", "--transport", nowhere())
    assert result.returncode == 3, result.stderr


# --- the other role's options -----------------------------------------------

def test_options_that_cannot_apply_are_refused():
    # Refused with exit 2 and one line, as a repeated option (they were warnings).
    for args, problem in [
        (["--role", "central", "--name", "X", "--question", "Q?"], "--name is a peripheral option: it does not apply with --role central"),
        (["--role", "peripheral", "--timeout", "3"], "--timeout is a central option: it does not apply with --role peripheral"),
        (["--role", "peripheral", "--json"], "--json is a central option: it does not apply with --role peripheral"),
        (["--role", "central", "--scan", "--question", "x?"], "--question does not apply with --scan, which lists 8-Balls and asks nothing"),
        (["--role", "central", "--scan", "--count", "2"], "--count does not apply with --scan, which lists 8-Balls and asks nothing"),
        (["--list-controllers", "--seed", "3"], "--seed is a peripheral option: it does not apply with --list-controllers"),
        (["--list-controllers", "--role", "central"],
         "--role does not apply with --list-controllers, which lists controllers and plays no role"),
    ]:
        result = run(*args, "--transport", nowhere())
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr == f"itcb-dongle: error: {problem} (see --help)\n", args
    result = run("--role", "peripheral", "--name", "X", "--transport", nowhere())
    assert result.returncode == 3 and "warning" not in result.stderr


def test_list_controllers_with_none_plugged_is_in_the_programs_style():
    # Every stderr line carries the program's prefix (this machine has no USB Bluetooth controller;
    # with one, the table goes to stdout and stderr stays empty).
    result = run("--list-controllers")
    assert result.returncode == 0, result.stderr
    assert all(line.startswith("itcb-dongle: ") for line in result.stderr.splitlines()), result.stderr
    if not result.stdout:
        assert result.stderr.startswith("itcb-dongle: warning: no USB Bluetooth controllers found"), result.stderr


# --- an unwritable --btsnoop file is an environment problem: 2 ----------------

def test_unwritable_btsnoop_exits_2(tmp_path):
    result = run("--role", "peripheral", "--btsnoop", str(tmp_path / "missing" / "x.btsnoop"), "--transport", nowhere())
    assert result.returncode == 2
    assert "cannot write btsnoop file" in result.stderr
    assert re.search(r"^\| 2 \|[^\n]*--btsnoop", README, re.M), "README's exit code 2 must mention --btsnoop"


# --- README, --help and the unit agree ------------------------------------------

def help_text():
    return run("--help").stdout


def test_help_lists_udev_match_and_no_float_default():
    text = help_text()
    assert "--udev-match" in text
    assert "(default: 0.0)" not in text and not re.search(r"default: \d+\.0\b", text)


def test_help_says_defaults_one_way_and_repeatable_once():
    # "(default: usb)" beside "Default: 5." read as two authors; --question said "repeatable" twice.
    text = " ".join(help_text().split())
    assert "(default:" not in text and "Default: usb." in text and "Default: 4." in text, text
    question = text[text.index("--question <question>"):text.index("--rssi-min")]
    assert "repeatable" not in question and question.count("more than once") == 1, question


def test_readme_table_and_help_list_the_same_options():
    help_options = set(re.findall(r"^\s+(?:-h, )?(--[a-z][a-z-]+)", help_text(), re.M))
    table = COMMAND_LINE[COMMAND_LINE.index("# Command line"):COMMAND_LINE.index("## Signals")]
    readme_options = set(re.findall(r"^\| `(--[a-z][a-z-]+)", table, re.M))
    readme_options |= set(re.findall(r"`, `(--[a-z][a-z-]+)", table))
    assert help_options - readme_options == set(), "in --help, not in the README table"
    assert readme_options - help_options == set(), "in the README, not in --help"


def test_readme_does_not_point_outside_the_repository():
    for text in [README] + [doc(name) for name in os.listdir(DOCS)]:
        assert "../shared" not in text and "SPEC.md" not in text


def test_one_udevadm_trigger_command_everywhere():
    # What the user is told to run after editing the dongles file (the USB
    # fixture proves this one: Tests/USBFixture/test_udev.py).
    command = "udevadm trigger --subsystem-match=usb --action=add"
    for path in ("README.md", "udev/dongles", "udev/70-itcb-dongle.rules", "scripts/install.sh"):
        text = open(os.path.join(REPO, path), encoding="utf-8").read()
        lines = [line for line in text.splitlines() if "udevadm trigger" in line]
        if path == "scripts/install.sh":  # its own trigger is not advice; its closing message is
            lines = [line for line in lines if line.lstrip().startswith("echo")]
        assert lines and all(command in line for line in lines), (path, lines)


def test_drop_ins_in_the_docs_are_the_units():
    unit = open(os.path.join(REPO, "udev", "itcb-dongle@.service"), encoding="utf-8").read()
    blocks = re.findall(r"```ini\n(.*?)```", DEPLOYMENT, re.S)
    assert len(blocks) == 2
    for block in blocks:
        for line in block.strip().splitlines():
            assert f"#   {line}" in unit, line
    tcp, serial = blocks
    assert "RestrictAddressFamilies=AF_UNIX AF_NETLINK AF_INET AF_INET6" in tcp and "PrivateNetwork=no" in tcp
    assert "DeviceAllow=char-ttyACM rw" in serial and "PrivateNetwork" not in serial


# --- the Swift version -------------------------------------------------------

def test_swift_version_is_one_across_readme_setup_and_build_scripts():
    # README and setup.sh said 6.2 while the shipped binary's build needs 6.3.
    needed = re.search(r"Needs: the Swift (\d+)\.(\d+) toolchain", read("scripts/build-embedded.sh")).groups()
    version = ".".join(needed)
    setup = read("scripts/setup.sh")
    assert f"Swift {version} or newer" in README and "Swift 6.2" not in README
    assert f"Swift {version} or newer is required" in setup and f"minor < {needed[1]}" in setup
    assert "https://www.swift.org/install/linux/tarball/" in README  # the guide it names, linked
    tools = re.match(r"// swift-tools-version: (\d+)\.(\d+)", read("Package.swift")).groups()
    # InlineArray and value generics need 6.2; nothing asks more of the SwiftPM build than the Embedded one.
    assert (6, 2) <= tuple(map(int, tools)) <= tuple(map(int, needed))
    demo = README[README.index("## Demo"):README.index("## First commands")]
    assert "Swift" in demo  # it must be there first


def test_docs_name_the_build_paths_the_scripts_use():
    # docs/DEPLOYMENT.md and the unit's recipe named .build-deb, which no script makes.
    unit = read("udev/itcb-dongle@.service")
    for name, text in (("README.md", README), ("DEPLOYMENT.md", doc("DEPLOYMENT.md")),
                       ("TESTING.md", doc("TESTING.md")), ("unit", unit)):
        assert ".build-deb" not in text, name
    recipe = re.search(r"sed 's\|/usr/bin/itcb-dongle\|'\$PWD'/([^|]+)\|'", unit).group(1)
    assert recipe == ".build-embedded/itcb-dongle"
    assert "(default DIR: .build-embedded," in read("scripts/build-embedded.sh")
    assert "/usr/lib/udev/rules.d/70-itcb-dongle.rules" in doc("DEPLOYMENT.md")


# --- man page and completion ------------------------------------------------

def test_man_page_documents_every_option(tmp_path):
    # Made at build time from the option table --help is made from.
    version = open(os.path.join(REPO, "VERSION")).read().strip()
    page = docs("man-page", version, env={"SOURCE_DATE_EPOCH": "1795478400"}).stdout
    assert '"2026-11-24"' in page
    assert page.startswith(".TH ITCB\\-DONGLE 1")
    for option in set(re.findall(r"^\s+(?:-h, )?(--[a-z][a-z-]+)", help_text(), re.M)):
        assert "\\fB" + option.replace("-", "\\-") + "\\fR" in page, option
    assert f'"itcb\\-dongle {version}"' in page
    # FILES: every file the kiosk admin edits or the service writes (the per-dongle file).
    for path in ("/etc/default/itcb\\-dongle", "/etc/itcb\\-dongle/dongles", "/etc/itcb\\-dongle/<bus\\-port>.conf",
                 "/var/log/itcb\\-dongle"):
        assert path in page[page.index(".SH FILES"):], path
    (tmp_path / "itcb-dongle.1").write_text(page)
    if shutil.which("man") is None:  # man-db not installed: the deployment suite renders it
        return
    rendered = subprocess.run(["man", "--warnings", "-l", str(tmp_path / "itcb-dongle.1")], capture_output=True,
                              text=True, env={**os.environ, "MANWIDTH": "80", "LC_ALL": "C.UTF-8"})
    assert rendered.returncode == 0 and rendered.stderr == "", rendered.stderr
    assert "EXIT STATUS" in rendered.stdout and "SYNOPSIS" in rendered.stdout


def test_completion_scripts():
    bash = docs("completion", "bash")
    assert bash.returncode == 0 and "--role" in bash.stdout and "peripheral" in bash.stdout
    zsh = docs("completion", "zsh")
    assert zsh.returncode == 0 and zsh.stdout.startswith("#compdef itcb-dongle")
    # The shipped binary carries no generator.
    assert "unknown option '--generate-completion-script'" in run("--generate-completion-script", "bash").stderr


# --- README "Running" works in order as written; controllers.py Ctrl-C --------

def by_hand_commands(text):
    """The three commands of a "by hand" block (controllers, peripheral, central), comments cut."""
    block = re.search(r"```sh\n(.*?)```", text, re.S).group(1)
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


def run_by_hand(tmp_path, controllers, peripheral, central):
    """Runs the three as written: the binary under test stands in for the demo's
    build, and free ports stand in for the documented ones (others may be in use)."""
    assert controllers.startswith(".venv/bin/python Tests/PythonSupport/controllers.py")
    ports = re.search(r"--ports (\d+) (\d+)", controllers).groups()
    assert f"tcp:127.0.0.1:{ports[0]}" in peripheral and f"tcp:127.0.0.1:{ports[1]}" in central
    assert peripheral.startswith(".build-embedded/itcb-dongle ") and central.startswith(".build-embedded/itcb-dongle ")
    free = [str(closed_port()), str(closed_port())]

    def as_run(command):
        for documented, actual in zip(ports, free):
            command = command.replace(documented, actual)
        return command.replace(".build-embedded/itcb-dongle", BINARY).replace(".venv/bin/python", sys.executable)

    started = []
    try:
        started.append(subprocess.Popen(as_run(controllers), shell=True, cwd=REPO, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True, start_new_session=True))
        assert started[0].stdout.readline().split() == ["PORTS", *free]
        log = tmp_path / "peripheral.log"
        with open(log, "w") as output:
            started.append(subprocess.Popen(as_run(peripheral), shell=True, cwd=REPO, stdout=output,
                                            stderr=subprocess.STDOUT, start_new_session=True))
        # The central finds the peripheral once it advertises: wait for that line (a hang limit, not a guess).
        deadline = time.time() + 60
        while "advertising" not in log.read_text() and started[1].poll() is None and time.time() < deadline:
            time.sleep(0.05)
        assert "advertising" in log.read_text(), log.read_text()
        result = subprocess.run(as_run(central), shell=True, cwd=REPO, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("Will it rain? -> ")
        assert result.stderr == "", result.stderr  # the central is quiet by default
    finally:
        for process in started:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            process.wait(10)


def test_command_line_by_hand_steps(tmp_path):
    # What the demo leaves (.venv, .build-embedded) is all it takes; no full set-up, no debug build.
    section = COMMAND_LINE[COMMAND_LINE.index("## By hand, against Bumble virtual controllers"):]
    assert "scripts/demo.sh" in section[:section.index("```sh")]
    run_by_hand(tmp_path, *by_hand_commands(section))


def test_readme_by_hand_steps_on_its_first_screen(tmp_path):
    # README's first screen leads from the demo to commands by hand, and they work as written.
    first = "\n".join(README.splitlines()[:60])
    commands = by_hand_commands(README[README.index("**By hand, after the demo**"):])
    assert len(commands) == 3 and all(command in first for command in commands)
    run_by_hand(tmp_path, *commands)


def ctrl_c_as_in_a_terminal():
    """For a child these tests Ctrl-C: SIGINT handled by default, as in a terminal,
    even when the test command itself was started in the background of a script
    (which starts with SIGINT ignored, and bash cannot trap a signal ignored on entry)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_controllers_helper_stops_quietly_on_ctrl_c():
    process = subprocess.Popen([sys.executable, os.path.join(REPO, "Tests", "PythonSupport", "controllers.py"), "2"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=ctrl_c_as_in_a_terminal)
    try:
        assert process.stdout.readline().startswith("PORTS ")
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=10)
        assert process.returncode == 130
        assert "Traceback" not in err and err == ""
    finally:
        if process.poll() is None:
            process.kill()


# --- the demo --------------------------------------------------------

def demo(interrupt_at=None, stop=signal.SIGINT, group=True):
    process = subprocess.Popen([os.path.join(REPO, "scripts", "demo.sh")], cwd=REPO, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True,
                               preexec_fn=ctrl_c_as_in_a_terminal)
    lines, interrupted = [], None
    try:
        for line in process.stdout:
            lines.append(line)
            if interrupt_at and interrupt_at in line:
                # What a terminal does on Ctrl-C: SIGINT to the whole foreground group;
                # else `kill` of the script alone.
                (os.killpg if group else os.kill)(process.pid, stop)
                interrupted = time.time()
                break
        rest = process.stdout.read()
        process.wait(30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    return process.returncode, "".join(lines), rest, interrupted


def test_demo_prints_answers_without_compiler_output():
    # Make the demo's build compile something (as a first run does).
    os.utime(os.path.join(REPO, "Sources", "ITCBDongle", "Controller", "StaticAddress.swift"))
    code, out, _, _ = demo()
    assert code == 0, out
    assert "warning:" not in out and "error:" not in out and "Compiling" not in out
    answers = [line for line in out.splitlines() if " -> " in line and not line.startswith("  ")]
    assert len(answers) == 3, out
    # Built before: no "the first build takes a few minutes".
    assert "first build" not in out, out
    # The demo's peripheral has a name longer than the advertising data holds:
    # the central found it by its full name, from the scan response (item 3).
    assert "scan response carries the full name" in out, out


def test_demo_ctrl_c_stops_at_once_quietly():
    code, before, after, interrupted = demo(interrupt_at="asks our peripheral")
    assert interrupted, before
    assert code == 130, before + after
    assert time.time() - interrupted < 5
    assert after == "", after  # no "central exited with", no sed error, no answer line


def test_demo_stopped_alone_stops_what_it_started_quietly():
    # SIGTERM to the script only, just as it starts the central (the instant a
    # Ctrl-C can miss the central too): it stops the central and the peripheral
    # before their controllers, so neither reports a closed controller, and
    # leaves nothing running (the pipe's read ends when every writer is gone).
    code, before, after, interrupted = demo(interrupt_at="asks our peripheral", stop=signal.SIGTERM, group=False)
    assert interrupted, before
    assert code == 143, before + after
    assert time.time() - interrupted < 5
    assert after == "", after


# --- README a user starts from, docs for the rest -----------------------------

def test_readme_is_a_users_page():
    lines = README.splitlines()
    assert len(lines) <= 250, len(lines)
    first = "\n".join(lines[:60])
    assert "Magic 8-Ball" in first and "--role peripheral" in first and "--role central" in first
    assert "docs/DONGLES.md" in first and "CSR8510" in first  # which dongles work, or the list
    assert "scripts/build-deb.sh" in first and "scripts/install.sh" in first  # install
    assert "scripts/demo.sh" in first
    assert "itcb-dongle --list-controllers" in first and "--question" in first  # first commands, real dongle
    assert "```sh\nscripts/test.sh\n```" in README  # the test command .ci/run calls
    assert "## Troubleshooting" in README
    # The lab notebook is gone from it: suite timings, issue-by-issue changes.
    assert "What changed" not in README and "| suite | time |" not in README


def test_developer_docs_exist_and_say_what_they_must():
    architecture = doc("ARCHITECTURE.md")
    for needed in ("## Layers", "## The data path of one packet", "## Where to start reading", "## State in place"):
        assert needed in architecture, needed
    testing = doc("TESTING.md")
    assert "swift test --disable-xctest --filter" in testing and ".venv/bin/python -m pytest -q Tests/Central -k" in testing
    assert "Executed 0 tests" in testing  # XCTest's empty count is said not to be the result
    assert "## What the tests prove" in testing
    performance = doc("PERFORMANCE.md")
    # Figures say the command that measures them and the day it last did.
    assert re.search(r"`scripts/bench-process.sh`, 20\d\d-\d\d-\d\d", performance)
    assert "itcb-dongle, USB" in performance and "scripts/bench-usb.sh" in performance  # the path kiosks run, beside TCP
    assert os.path.isfile(os.path.join(REPO, "CHANGELOG.md"))
    for name in ("FIRMWARE.md", "INTEROP.md", "DONGLES.md", "DEPLOYMENT.md", "COMMAND-LINE.md"):
        assert os.path.isfile(os.path.join(DOCS, name)), name


def test_relative_links_resolve():
    pages = {"README.md": README, "CHANGELOG.md": open(os.path.join(REPO, "CHANGELOG.md"), encoding="utf-8").read()}
    pages.update({f"docs/{name}": doc(name) for name in os.listdir(DOCS)})
    for page, text in pages.items():
        for target in re.findall(r"\]\(([^)#][^)]*)\)", text):
            if target.startswith("http"):
                continue
            path = os.path.normpath(os.path.join(REPO, os.path.dirname(page), target))
            assert os.path.exists(path), (page, target)


# --- writable paths; the unit's environment ------------------------------------

def test_unit_defaults_and_docs_agree_on_writable_paths():
    unit = open(os.path.join(REPO, "udev", "itcb-dongle@.service"), encoding="utf-8").read()
    defaults = open(os.path.join(REPO, "udev", "itcb-dongle.default"), encoding="utf-8").read()
    assert "LogsDirectory=itcb-dongle" in unit and "PrivateTmp=yes" in unit and "ProtectSystem=strict" in unit
    assert "ReadWritePaths" not in unit
    for text in (unit, defaults, README, DEPLOYMENT):
        flat = " ".join(text.split()).replace("# ", "")
        assert "/var/log/itcb-dongle" in flat
        # /tmp is never offered as a place to keep a capture; where it is named, it is private.
        for mention in re.finditer(r"/tmp\b", flat):
            around = flat[max(0, mention.start() - 120):mention.end() + 120]
            if "--btsnoop" in around or "writ" in around:
                assert "private" in around or "PrivateTmp" in around, around


def test_unit_runs_either_role_without_warnings(tmp_path):
    for role, extra in (("central", {"ITCB_QUESTION": "Will it rain?"}), ("peripheral", {"ITCB_NAME": "Kiosk in the lobby"})):
        words, env = unit_command(role, **extra)
        assert words[0] == "/usr/bin/itcb-dongle"
        assert env["ITCB_METRICS_FILE"] == "/var/lib/itcb-dongle/1-1.prom", env
        # The unit's StateDirectory= makes that directory; here, one of the test's.
        env["ITCB_METRICS_FILE"] = str(tmp_path / f"{role}.prom")
        # No controller here: the transport fails (3), after the command line and environment passed.
        words = [BINARY] + [nowhere() if w == "usb:1-1" else w for w in words[1:]]
        result = subprocess.run(words, capture_output=True, text=True, timeout=20, env={**os.environ, **env})
        assert result.returncode == 3, (role, result.stderr)
        assert "warning" not in result.stderr and "unexpected argument" not in result.stderr, result.stderr
        # Either role's metrics file, saying it is down.
        text = (tmp_path / f"{role}.prom").read_text()
        assert re.search(r'^itcb_dongle_up\{[^}]*\} 0$', text, re.M) and f'role="{role}"' in text, text


def test_environment_applies_to_its_role_only():
    # Values the checks refuse show which role took which variable.
    env = {**os.environ, "ITCB_NAME": "N" * 300, "ITCB_QUESTION": "Q" * 600 + "?"}
    result = run("--role", "peripheral", "--transport", nowhere(), env=env)
    assert result.returncode == 2 and "--name must be 1 to 248 bytes of UTF-8 (got 300 bytes)" in result.stderr
    result = run("--role", "central", "--transport", nowhere(), env=env)
    assert result.returncode == 2 and "--question is longer than 512 bytes (got 601)" in result.stderr
    # The command line wins over the environment.
    result = run("--role", "peripheral", "--name", "Cli", "--transport", nowhere(), env=env)
    assert result.returncode == 3, result.stderr
    result = run("--role", "central", "--question", "Cli?", "--transport", nowhere(), env=env)
    assert result.returncode == 3, result.stderr
    result = run("--role", "peripheral", "--transport", nowhere(), env={**os.environ, "ITCB_ANSWERS": "loud"})
    assert result.returncode == 2 and "ITCB_ANSWERS must be slug or text (got 'loud')" in result.stderr
    result = run("--role", "central", "--question", "Q?", "--transport", nowhere(), env={**os.environ, "ITCB_ANSWERS": "loud"})
    assert result.returncode == 3, result.stderr


# --- one message style; repeated options; completion --------------------------------

@pytest.mark.parametrize("args, expected", [
    (["--role", "peripheal"], "--role must be peripheral or central (got 'peripheal')"),
    (["--role", "peripheral", "--answers", "loud"], "--answers must be slug or text (got 'loud')"),
    (["--role", "central", "--count", "many"], "--count must be a number (got 'many')"),
    (["--role", "central", "--peer"], "--peer needs a value"),
    (["--role", "central", "--question", "Will", "it", "rain?"], "(a value with spaces needs quotes: --question \"Will it rain?\")"),
])
def test_parser_messages_in_the_programs_style(args, expected):
    result = run(*args)
    assert result.returncode == 2
    line = result.stderr.strip()
    assert len(line.splitlines()) == 1 and expected in line, line
    message = line.removeprefix("itcb-dongle: error: ")
    assert not message[0].isupper() and "Please provide" not in message and "The value" not in message, message


@pytest.mark.parametrize("args", [
    ["--role", "peripheral", "--role", "central"],
    ["--role", "peripheral", "--name", "A", "--name=B"],
    ["--role", "central", "--json", "--json", "--question", "Q?"],
])
def test_repeated_options_are_refused(args):
    result = run(*args)
    assert result.returncode == 2
    assert "is given 2 times" in result.stderr and "give it once" in result.stderr, result.stderr


def test_question_may_repeat():
    result = run("--role", "central", "--question", "A?", "--question", "B?", "--transport", nowhere())
    assert result.returncode == 3, result.stderr


def test_bash_completion_offers_log_levels():
    bash = docs("completion", "bash").stdout
    case = bash[bash.index("'--log-level')"):]
    case = case[:case.index(";;")]
    assert all(f"'{level}'" in case for level in ("error", "warning", "info", "debug", "trace")), case


# --- --json objects in every outcome; a quiet central --------------------------

def test_json_errors_are_objects_too():
    result = run("--role", "central", "--json", "--timeout", "0")
    assert result.returncode == 2
    record = json.loads(result.stdout)
    assert record == {"error": "usage", "message": "--timeout must be more than 0 and at most 600 seconds (got 0)",
                      "exit": 2}
    result = run("--role", "central", "--json", "--question", "Q?", "--transport", nowhere())
    assert result.returncode == 3
    lines = result.stdout.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["error"] == "transport" and json.loads(lines[0])["exit"] == 3
    # Without --json, stdout stays empty on errors.
    assert run("--role", "central", "--question", "Q?", "--transport", nowhere()).stdout == ""


def test_central_is_quiet_by_default():
    result = run("--role", "central", "--question", "Q?", "--transport", nowhere())
    assert result.returncode == 3
    assert "info:" not in result.stderr and result.stderr.count("\n") == 1, result.stderr


def test_troubleshooting_quotes_what_the_program_prints():
    """Each message README's Troubleshooting quotes that a run without a
    controller can make is made here, and the quote (its "…" parts standing
    for what varies) matches the line printed."""
    table = README[README.index("## Troubleshooting"):]
    quoted = re.findall(r"^\| `([^`]+)`", table, flags=re.M)

    def pattern(quote):
        parts = [re.escape(part) for part in re.split(r"…|\bP\b", quote)]
        return re.compile(".+".join(parts))

    port = nowhere().rsplit(":", 1)[1]
    made = {
        "cannot connect to controller at 127.0.0.1:P": run("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{port}"),
        "2 unexpected arguments: 'it', 'rain?'": run("--role", "central", "--question", "Will", "it", "rain?"),
    }
    if not os.path.exists("/dev/bus/usb") or not os.listdir("/dev/bus/usb"):
        made["no USB Bluetooth dongle found; seen: …"] = run("--role", "peripheral", "--transport", "usb")
    for quote, result in made.items():
        assert quote in quoted, f"README's Troubleshooting no longer quotes {quote!r}"
        lines = [line for line in result.stderr.splitlines() if line.startswith("itcb-dongle: error: ")]
        assert any(pattern(quote).search(line) for line in lines), (quote, result.stderr)


def test_the_binarys_size_is_given_in_one_place():
    """The shipped binary's size is measured into docs/PERFORMANCE.md; the other
    documents link there instead of carrying a copy that goes stale."""
    size = re.compile(r"\d[\d,.]* ?(KB|kB|B|bytes)\b[^.\n]{0,40}stripped|stripped[^.\n]{0,25}?\d[\d,.]* ?(KB|B|bytes)\b")
    for name, text in (("README.md", README), ("docs/DEPLOYMENT.md", DEPLOYMENT),
                       ("docs/ARCHITECTURE.md", doc("ARCHITECTURE.md"))):
        found = size.search(text)
        assert not found, f"{name} gives the binary's size ({found.group(0)!r}): link docs/PERFORMANCE.md instead"
    assert size.search(doc("PERFORMANCE.md"))
