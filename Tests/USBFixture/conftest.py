import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from fixture import Guest  # noqa: E402
from harness import Controllers  # noqa: E402


@pytest.fixture(scope="module")
def link():
    """Bumble controllers on one link: [0] behind the guest's emulated dongle, [1] and [2] for Bumble peers."""
    c = Controllers(3)
    yield c
    c.stop()


@pytest.fixture(scope="module")
def guest(link):
    g = Guest(link.ports[0])
    yield g
    g.stop()
