import os
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "Support"))
from harness import Controllers  # noqa: E402


@pytest.fixture
def controllers():
    c = Controllers(2)
    yield c
    c.stop()


@pytest.fixture
def workdir():
    with tempfile.TemporaryDirectory() as d:
        yield d
