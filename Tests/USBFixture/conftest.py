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
