import pytest
from harness import Controllers


@pytest.fixture
def link():
    """Four Bumble controllers on one link: ours plus up to three Bumble peers."""
    c = Controllers(4)
    yield c
    c.stop()
