"""The command line a newcomer meets (issue 12): usage, errors that say what is
wrong, --version, warnings for ignored options, exit codes, and the docs
(README, --help, man page, unit, scripts) agreeing with each other and with
the program. No controller needed: where a run must get past the command
line, it points at a closed TCP port and expects exit 3."""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest
from harness import BINARY, REPO

README = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()


def run(*args, timeout=20, **kwargs):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=timeout, **kwargs)


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def nowhere():
    return f"tcp:127.0.0.1:{closed_port()}"


# --- item 10: usage, typos, --version -------------------------------------------------

def test_no_arguments_prints_usage():
    result = run()
    assert result.returncode == 2
    assert result.stderr.startswith("usage: itcb-dongle --role peripheral")
    assert "--role central" in result.stderr and "--help" in result.stderr
    assert result.stdout == ""


def test_unknown_option_is_reported_with_a_suggestion():
    result = run("--rol", "peripheral")
    assert result.returncode == 2
    assert result.stderr.strip() == "itcb-dongle: error: Unknown option '--rol'. Did you mean '--role'? (see --help)"


def test_role_without_flag_is_pointed_at_role():
    for role in ("peripheral", "central"):
        result = run(role)
        assert result.returncode == 2
        assert f"Unexpected argument '{role}'. Did you mean '--role {role}'?" in result.stderr
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


# --- item 11: values and what is wrong with them ---------------------------------------

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


# --- item 5: --name must be UTF-8 --------------------------------------------------------

def test_name_with_invalid_utf8_is_refused():
    for args in ([b"--name", b"Kiosk\xff"], [b"--name=\xc3\x28"]):
        result = subprocess.run([BINARY.encode(), b"--role", b"peripheral", *args, b"--transport",
                                 nowhere().encode()], capture_output=True, timeout=20)
        assert result.returncode == 2, result.stderr
        assert b"--name must be valid UTF-8" in result.stderr


def test_name_with_valid_utf8_passes():
    result = run("--role", "peripheral", "--name", "Küche 8", "--transport", nowhere())
    assert result.returncode == 3, result.stderr


# --- item 14: the other role's options -----------------------------------------------

def test_other_roles_options_are_warned_about():
    result = run("--role", "central", "--name", "X", "--seed", "3", "--question", "Q?", "--transport", nowhere())
    assert result.returncode == 3
    assert "warning: --name is a peripheral option: ignored with --role central" in result.stderr
    assert "warning: --seed is a peripheral option: ignored with --role central" in result.stderr
    result = run("--role", "peripheral", "--timeout", "3", "--json", "--transport", nowhere())
    assert "warning: --timeout is a central option: ignored with --role peripheral" in result.stderr
    assert "warning: --json is a central option: ignored with --role peripheral" in result.stderr
    result = run("--role", "peripheral", "--name", "X", "--transport", nowhere())
    assert "warning" not in result.stderr


# --- item 15: an unwritable --btsnoop file is an environment problem: 2 ----------------

def test_unwritable_btsnoop_exits_2(tmp_path):
    result = run("--role", "peripheral", "--btsnoop", str(tmp_path / "missing" / "x.btsnoop"), "--transport", nowhere())
    assert result.returncode == 2
    assert "cannot write btsnoop file" in result.stderr
    assert re.search(r"^\| 2 \|[^\n]*--btsnoop", README, re.M), "README's exit code 2 must mention --btsnoop"


# --- item 19: README, --help and the unit agree ------------------------------------------

def help_text():
    return run("--help").stdout


def test_help_lists_udev_match_and_no_float_default():
    text = help_text()
    assert "--udev-match" in text
    assert "(default: 0.0)" not in text and not re.search(r"default: \d+\.0\b", text)


def test_readme_table_and_help_list_the_same_options():
    help_options = set(re.findall(r"^\s+(?:-h, )?(--[a-z][a-z-]+)", help_text(), re.M))
    table = README[README.index("## Command line"):README.index("### Exit codes")]
    readme_options = set(re.findall(r"^\| `(--[a-z][a-z-]+)", table, re.M))
    readme_options |= set(re.findall(r"`, `(--[a-z][a-z-]+)", table))
    assert help_options - readme_options == set(), "in --help, not in the README table"
    assert readme_options - help_options - {"--generate-completion-script"} == set(), "in the README, not in --help"


def test_readme_does_not_point_outside_the_repository():
    assert "../shared" not in README and "SPEC.md" not in README


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


def test_drop_ins_in_readme_are_the_units():
    unit = open(os.path.join(REPO, "udev", "itcb-dongle@.service"), encoding="utf-8").read()
    blocks = re.findall(r"```ini\n(.*?)```", README, re.S)
    assert len(blocks) == 2
    for block in blocks:
        for line in block.strip().splitlines():
            assert f"#   {line}" in unit, line
    tcp, serial = blocks
    assert "RestrictAddressFamilies=AF_UNIX AF_NETLINK AF_INET AF_INET6" in tcp and "PrivateNetwork=no" in tcp
    assert "DeviceAllow=char-ttyACM rw" in serial and "PrivateNetwork" not in serial


# --- item 6: the Swift version -------------------------------------------------------

def test_swift_version_is_the_same_in_package_and_readme():
    package = open(os.path.join(REPO, "Package.swift")).read()
    tools = re.match(r"// swift-tools-version: (\d+\.\d+)", package).group(1)
    # InlineArray and value generics need Swift 6.2.
    assert tuple(map(int, tools.split("."))) >= (6, 2)
    assert f"Swift {tools} or newer" in README


# --- item 20: man page and completion ------------------------------------------------

def test_man_page_documents_every_option(tmp_path):
    page = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "manpage.py"), BINARY],
                          capture_output=True, text=True, check=True).stdout
    assert page.startswith(".TH ITCB\\-DONGLE 1")
    for option in set(re.findall(r"^\s+(?:-h, )?(--[a-z][a-z-]+)", help_text(), re.M)):
        assert "\\fB" + option.replace("-", "\\-") + "\\fR" in page, option
    version = open(os.path.join(REPO, "VERSION")).read().strip()
    assert f'"itcb\\-dongle {version}"' in page
    (tmp_path / "itcb-dongle.1").write_text(page)
    if shutil.which("man") is None:  # man-db not installed: the deployment suite renders it
        return
    rendered = subprocess.run(["man", "--warnings", "-l", str(tmp_path / "itcb-dongle.1")], capture_output=True,
                              text=True, env={**os.environ, "MANWIDTH": "80", "LC_ALL": "C.UTF-8"})
    assert rendered.returncode == 0 and rendered.stderr == "", rendered.stderr
    assert "EXIT STATUS" in rendered.stdout and "SYNOPSIS" in rendered.stdout


def test_completion_scripts():
    bash = run("--generate-completion-script", "bash")
    assert bash.returncode == 0 and "--role" in bash.stdout and "peripheral" in bash.stdout
    zsh = run("--generate-completion-script", "zsh")
    assert zsh.returncode == 0 and zsh.stdout.startswith("#compdef itcb-dongle")


# --- item 9: README "Running" works in order as written; controllers.py Ctrl-C --------

def test_readme_running_steps(tmp_path):
    section = README[README.index("### Against a Bumble virtual controller"):README.index("### With a USB dongle")]
    commands = [line.split("  #")[0].strip() for block in re.findall(r"```sh\n(.*?)```", section, re.S)
                for line in block.splitlines() if line.strip()]
    assert commands[:2] == ["scripts/setup.sh", "swift build"], commands
    controllers, peripheral, central = commands[2:]
    assert controllers.startswith(".venv/bin/python Tests/Support/controllers.py")
    ports = re.search(r"--ports (\d+) (\d+)", controllers).groups()
    assert f"tcp:127.0.0.1:{ports[0]}" in peripheral and f"tcp:127.0.0.1:{ports[1]}" in central
    assert peripheral.startswith(".build/debug/itcb-dongle ") and central.startswith(".build/debug/itcb-dongle ")
    # Run the three as written; the binary under test stands in for the build,
    # and free ports stand in for the documented ones (others may be in use).
    free = [str(closed_port()), str(closed_port())]

    def as_run(command):
        for documented, actual in zip(ports, free):
            command = command.replace(documented, actual)
        return command.replace(".build/debug/itcb-dongle", BINARY).replace(".venv/bin/python", sys.executable)

    started = []
    try:
        started.append(subprocess.Popen(as_run(controllers), shell=True, cwd=REPO, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True, start_new_session=True))
        assert started[0].stdout.readline().split() == ["PORTS", *free]
        started.append(subprocess.Popen(as_run(peripheral), shell=True, cwd=REPO, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, start_new_session=True))
        time.sleep(1.5)
        result = subprocess.run(as_run(central), shell=True, cwd=REPO, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("Will it rain? -> ")
    finally:
        for process in started:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            process.wait(10)


def test_controllers_helper_stops_quietly_on_ctrl_c():
    process = subprocess.Popen([sys.executable, os.path.join(REPO, "Tests", "Support", "controllers.py"), "2"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().startswith("PORTS ")
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=10)
        assert process.returncode == 130
        assert "Traceback" not in err and err == ""
    finally:
        if process.poll() is None:
            process.kill()


# --- items 7 and 8: the demo --------------------------------------------------------

def demo(interrupt_at=None):
    process = subprocess.Popen([os.path.join(REPO, "scripts", "demo.sh")], cwd=REPO, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    lines, interrupted = [], None
    try:
        for line in process.stdout:
            lines.append(line)
            if interrupt_at and interrupt_at in line:
                # What a terminal does on Ctrl-C: SIGINT to the whole foreground group.
                os.killpg(process.pid, signal.SIGINT)
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
    os.utime(os.path.join(REPO, "Sources", "ITCBDongle", "StaticAddress.swift"))
    code, out, _, _ = demo()
    assert code == 0, out
    assert "warning:" not in out and "error:" not in out and "Compiling" not in out
    answers = [line for line in out.splitlines() if " -> " in line and not line.startswith("  ")]
    assert len(answers) == 3, out


def test_demo_ctrl_c_stops_at_once_quietly():
    code, before, after, interrupted = demo(interrupt_at="asks our peripheral")
    assert interrupted, before
    assert code == 130, before + after
    assert time.time() - interrupted < 5
    assert after == "", after  # no "central exited with", no sed error, no answer line
