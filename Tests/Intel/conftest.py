"""The Intel suite's firmware: Debian's firmware-iwlwifi ibt-* files, fetched
and extracted by scripts/firmware-files.sh (cached under .cache/)."""
import os
import subprocess

import pytest
from harness import REPO


@pytest.fixture(scope="session")
def firmware_dir():
    out = subprocess.run([os.path.join(REPO, "scripts", "firmware-files.sh")], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, f"scripts/firmware-files.sh failed:\n{out.stderr}"
    path = out.stdout.strip().splitlines()[-1]
    assert os.path.isfile(os.path.join(path, "intel", "ibt-0041-0041.sfi")), f"no intel/ files under {path}"
    return path
