import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "Support"))
from harness import Controllers  # noqa: E402


@pytest.fixture
def link():
    """Four Bumble controllers on one link: ours plus up to three Bumble peers."""
    c = Controllers(4)
    yield c
    c.stop()
