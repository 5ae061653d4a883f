"""Shared by every Python suite: the harness on sys.path and a scratch folder."""
import os
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Support"))


@pytest.fixture
def workdir():
    with tempfile.TemporaryDirectory() as d:
        yield d
