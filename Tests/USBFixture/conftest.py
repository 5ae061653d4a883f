import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from fixture import Guest, Link  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def prepared():
    """Packages, kernel and initramfs (Tests/USBFixture/setup.sh; quick when cached)."""
    result = subprocess.run([os.path.join(HERE, "setup.sh")], capture_output=True, text=True)
    assert result.returncode == 0, f"Tests/USBFixture/setup.sh failed:\n{result.stdout}{result.stderr}"


@pytest.fixture(scope="module")
def link():
    """Bumble controllers on one link: [0] behind the guest's emulated dongle, [1] and [2] for Bumble peers."""
    c = Link(3)
    yield c
    c.stop()


@pytest.fixture(scope="module")
def guest(link):
    g = Guest(link.ports[0])
    yield g
    g.stop()


@pytest.fixture(autouse=True)
def dongle_back_on_the_bus(request):
    """After each test on the shared guest: the dongle on the bus again if the
    test left it off (said on the output, with the logs that show why)."""
    yield
    if "guest" not in request.fixturenames:
        return
    report = request.getfixturevalue("guest").replug_if_gone()
    if report is not None:
        print(f"\nusb-fixture: {request.node.name} left the dongle off the bus; plugged it in again\n{report}",
              file=sys.__stderr__)
