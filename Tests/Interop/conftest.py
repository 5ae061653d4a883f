"""Fixtures of the peripheral interop suite.

By default the device under test is our binary ($ITCB_DONGLE_BIN, else
.build/debug/itcb-dongle); a missing binary fails the tests. With
ITCB_PERIPHERAL=bumble the same scenarios run against the Bumble 8-Ball of
Tests/PythonSupport/bumble_8ball.py instead: a stack nobody here wrote, which shows the
tests themselves are right. Only in that mode, tests marked `ours_only` (our CLI,
log, btsnoop, SMP refusal, advertising policy) and flags the Bumble 8-Ball lacks
are skipped; against our binary nothing is skipped.

Every test has an overall time limit (ITCB_INTEROP_TEST_TIMEOUT, 150 s), every
process is stopped at teardown (process groups), and a failing test's report
carries the peripheral's log and its btsnoop file name."""
import os
import subprocess
import sys

import pytest
from harness import REPO, Controllers, Dongle, Logged, per_test_limit

TARGET = os.environ.get("ITCB_PERIPHERAL", "ours")
if TARGET not in ("ours", "bumble"):
    raise pytest.UsageError(f"ITCB_PERIPHERAL must be 'ours' or 'bumble', not {TARGET!r}")
BUMBLE_8BALL = os.path.join(REPO, "Tests", "PythonSupport", "bumble_8ball.py")


def pytest_configure(config):
    config.addinivalue_line("markers", "ours_only: checks our binary itself; skipped with ITCB_PERIPHERAL=bumble")


def pytest_collection_modifyitems(config, items):
    if TARGET == "bumble":
        skip = pytest.mark.skip(reason="checks our binary, not the 8-Ball contract (ITCB_PERIPHERAL=bumble)")
        for item in items:
            if "ours_only" in item.keywords:
                item.add_marker(skip)


pytest_runtest_call = per_test_limit("ITCB_INTEROP_TEST_TIMEOUT", 150)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.failed:
        for index, process in enumerate(getattr(item, "itcb_peripherals", [])):
            title = f"peripheral #{index} ({process.describe()})"
            report.sections.append((title, process.log or "(no output)"))
    return report


class Peripheral(Dongle):
    """Our binary as the 8-Ball under test."""

    ours = True

    def __init__(self, *args, btsnoop=None):
        self.btsnoop = btsnoop
        super().__init__(*args)

    def describe(self):
        return f"itcb-dongle, exit {self.process.poll()}, btsnoop {self.btsnoop or '-'}"

    def stop_cleanly(self, grace=3.0):
        """SIGTERM; our binary must exit 0 within `grace` seconds."""
        if self.process.poll() is None:
            self.process.terminate()
        try:
            code = self.process.wait(grace)
        except subprocess.TimeoutExpired:
            code = None
        self.stop()
        assert code == 0, f"peripheral did not exit 0 within {grace} s of SIGTERM (got {code}):\n{self.log}"


class BumblePeripheral(Dongle):
    """The Bumble 8-Ball (Tests/PythonSupport/bumble_8ball.py) in the same role."""

    ours = False
    btsnoop = None

    def __init__(self, port, name, *extra):
        args = ["--transport", f"tcp-client:127.0.0.1:{port}", "--name", name]
        flags = iter(extra)
        for flag in flags:
            if flag == "--seed":
                args += ["--seed", next(flags)]
            elif flag == "--log-level":
                next(flags)
            else:
                pytest.skip(f"the Bumble 8-Ball has no {flag} (ITCB_PERIPHERAL=bumble)")
        Logged.__init__(self, [sys.executable, BUMBLE_8BALL, *args])

    def describe(self):
        return f"Bumble 8-Ball, exit {self.process.poll()}"

    def stop_cleanly(self, grace=3.0):
        self.stop()


@pytest.fixture
def link():
    """Three Bumble controllers on one link: the peripheral's plus two for Bumble centrals."""
    c = Controllers(3)
    yield c
    c.stop()


@pytest.fixture
def peripheral(link, request, tmp_path):
    """Factory: peripheral(name="Ball8", *extra_flags) starts the 8-Ball on the
    first controller and returns once it advertises. Our binary gets --btsnoop
    (a file in tmp_path) and --log-level debug unless the test passes its own. At teardown each one
    still running gets SIGTERM and must exit 0 within 3 s; one that exited
    before must have exited 0 (a test that stopped it itself)."""
    started = []
    request.node.itcb_peripherals = started

    def start(name="Ball8", *extra):
        if TARGET == "bumble":
            process = BumblePeripheral(link.ports[0], name, *extra)
            started.append(process)
            process.wait_for("READY", timeout=30)
            return process
        btsnoop = None
        if "--btsnoop" not in extra:
            btsnoop = str(tmp_path / f"peripheral-{len(started)}.btsnoop")
            extra = (*extra, "--btsnoop", btsnoop)
        else:
            btsnoop = extra[extra.index("--btsnoop") + 1]
        if "--log-level" not in extra:
            extra = ("--log-level", "debug", *extra)
        process = Peripheral("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{link.ports[0]}", "--name", name,
                             *extra, btsnoop=btsnoop)
        started.append(process)
        process.wait_for("info: advertising")
        return process

    yield start
    problems = []
    for process in started:
        try:
            if process.process.poll() is not None and process.ours:
                code = process.process.returncode
                process.stop()
                assert code == 0, f"peripheral exited by itself with {code}:\n{process.log}"
            else:
                process.stop_cleanly()
        except AssertionError as error:
            problems.append(str(error))
        finally:
            process.stop()
    if problems:
        pytest.fail("\n\n".join(problems), pytrace=False)
