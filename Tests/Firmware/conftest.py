"""Fixtures of the firmware suite: the ELF built by scripts/firmware.sh,
QEMU mps2-an386 running it with UART0 on a Bumble virtual controller, and the
firmware's log (UART1) collected line by line.

ITCB_FIRMWARE_ELF=path skips the build and uses that ELF (its budget JSON must
lie next to it). Every test has an overall limit (ITCB_FIRMWARE_TEST_TIMEOUT,
120 s); QEMU and the controllers are stopped at teardown (process groups)."""
import json
import os
import subprocess

import pytest
from harness import REPO, Controllers, Logged, per_test_limit

from firmware_figures import FIGURES, NAME, SEED, TINY_RING_NAME

pytest_runtest_call = per_test_limit("ITCB_FIRMWARE_TEST_TIMEOUT", 120)


def pytest_terminal_summary(terminalreporter):
    if FIGURES:
        terminalreporter.write_sep("-", "firmware figures")
        for key, value in FIGURES.items():
            terminalreporter.write_line(f"{key}: {value}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    firmware = item.funcargs.get("firmware") if hasattr(item, "funcargs") else None
    if report.failed and firmware is not None:
        report.sections.append(("firmware log (UART1)", firmware.log or "(no output)"))
    return report


def build(name, *options):
    """scripts/firmware.sh build; the path of the ELF (the build checks the budgets)."""
    # A hang limit only: the build takes about 40 s, but a starved one (both cores busy, this suite yielding
    # to the guests) took over 10 minutes.
    result = subprocess.run([os.path.join(REPO, "scripts", "firmware.sh"), "build", "--name", name, *options],
                            capture_output=True, text=True, timeout=3600, cwd=REPO)
    assert result.returncode == 0, f"firmware build failed:\n{result.stdout}\n{result.stderr}"
    path = os.path.join(REPO, ".build-firmware", f"{name}.elf")
    assert os.path.exists(path), result.stdout
    return path


@pytest.fixture(scope="session")
def elf():
    """The firmware, built once with the suite's name and seed."""
    return os.environ.get("ITCB_FIRMWARE_ELF") or build(NAME, "--seed", str(SEED))


@pytest.fixture(scope="session")
def tiny_ring_elf():
    """The same firmware with a 16-byte UART receive ring and a lazy main loop:
    flow control at work."""
    return build(TINY_RING_NAME, "--rx-ring", "16", "--rx-lazy-ms", "5")


@pytest.fixture(scope="session")
def budget(elf):
    with open(elf[:-len(".elf")] + ".budget.json") as f:
        return json.load(f)


class Firmware(Logged):
    """QEMU running the ELF via scripts/firmware.sh run; UART1 lines collected."""

    def __init__(self, elf, port, *options):
        super().__init__([os.path.join(REPO, "scripts", "firmware.sh"), "run", "--elf", elf, "--h4",
                          f"127.0.0.1:{port}", *options], stdin=subprocess.DEVNULL, cwd=REPO)

    def status_values(self, key):
        """The number after `key` in every status line ("stack peak", "rx held", ...)."""
        return [int(line.split(key + " ")[1].split()[0].rstrip(",")) for _, line in self.lines
                if line.startswith("status: ") and key + " " in line]

    def stack_peaks(self):
        return [int(line.split("stack peak ")[1].split()[0]) for _, line in self.lines if "status: stack peak " in line]


@pytest.fixture(scope="module")
def link():
    """Two Bumble controllers on one link: the firmware's and the central's."""
    c = Controllers(2)
    yield c
    c.stop()


@pytest.fixture(scope="module")
def firmware(elf, link):
    """The firmware in QEMU on the first controller, advertising."""
    fw = Firmware(elf, link.ports[0])
    try:
        fw.wait_for("host: advertising", timeout=30)
        yield fw
    finally:
        fw.stop()
