import pytest
from harness import Controllers


@pytest.fixture
def controllers():
    """Two Bumble controllers on one link: our peripheral and a Bumble central."""
    c = Controllers(2)
    yield c
    c.stop()
