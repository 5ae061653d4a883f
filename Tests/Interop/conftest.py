import pytest
from harness import Controllers, Dongle


@pytest.fixture
def link():
    """Three Bumble controllers on one link: our peripheral plus two Bumble centrals."""
    c = Controllers(3)
    yield c
    c.stop()


@pytest.fixture
def peripheral(link):
    """Starts our peripheral on the first controller; stops it (SIGTERM → exit 0) at teardown."""
    started = []

    def start(name="Ball8", *extra):
        dongle = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{link.ports[0]}", "--name", name,
                        "--log-level", "debug", *extra)
        started.append(dongle)
        dongle.wait_for("info: advertising")
        return dongle

    yield start
    for dongle in started:
        if dongle.process.poll() is None:
            dongle.process.terminate()
            try:
                code = dongle.process.wait(3)
            except Exception:
                code = None
            dongle.stop()
            assert code == 0, f"peripheral did not stop cleanly on SIGTERM ({code}):\n{dongle.log}"
