"""Fixtures of the RootCanal suite: one RootCanal per test (every TCP connection
to its HCI port is a new controller on one virtual radio), and our binary with a
btsnoop file whose HCI commands must all have got status 0."""

import pytest
from harness import Dongle, per_test_limit
from rootcanal import RootCanal, assert_every_command_succeeded

pytest_runtest_call = per_test_limit("ITCB_ROOTCANAL_TEST_TIMEOUT", 240)


@pytest.fixture
def radio():
    r = RootCanal()
    yield r
    r.stop()


@pytest.fixture
def ours(radio, tmp_path):
    """Factory: ours(role, *flags) starts our binary on a new RootCanal controller
    with --btsnoop. At teardown: SIGTERM, exit 0 within 3 s, and every HCI command
    in its btsnoop answered with status 0x00."""
    started = []

    def start(*args):
        snoop = str(tmp_path / f"ours-{len(started)}.btsnoop")
        process = Dongle(*args, "--transport", f"tcp:127.0.0.1:{radio.port}", "--btsnoop", snoop,
                         "--log-level", "debug")
        process.snoop = snoop
        started.append(process)
        return process

    yield start
    problems = []
    for process in started:
        if process.process.poll() is None:
            process.process.terminate()
            try:
                code = process.process.wait(3)
            except Exception:
                code = None
            if code != 0:
                problems.append(f"exit {code} after SIGTERM:\n{process.log[-3000:]}")
        process.stop()
        try:
            assert_every_command_succeeded(process.snoop)
        except AssertionError as error:
            problems.append(f"{error}\n{process.log[-3000:]}")
    if problems:
        pytest.fail("\n\n".join(problems), pytrace=False)
