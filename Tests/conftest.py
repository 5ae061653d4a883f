"""Shared by every Python suite: the harness on sys.path and a scratch folder."""
import os
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "PythonSupport"))


@pytest.fixture
def workdir():
    with tempfile.TemporaryDirectory() as d:
        yield d


@pytest.fixture(scope="session")
def firmware_dir():
    """Debian's firmware-realtek, firmware-iwlwifi, bluez-firmware and firmware-mediatek files
    (rtl_bt/, intel/, brcm/, mediatek/), fetched and extracted under .cache/ by scripts/firmware-files.sh."""
    import subprocess

    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([os.path.join(repo, "scripts", "firmware-files.sh")], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, f"scripts/firmware-files.sh failed:\n{out.stderr}"
    path = out.stdout.strip().splitlines()[-1]
    for name in ("rtl_bt/rtl8761bu_fw.bin", "intel/ibt-0041-0041.sfi", "brcm/BCM43430A1.hcd",
                 "mediatek/BT_RAM_CODE_MT7961_1_2_hdr.bin"):
        assert os.path.isfile(os.path.join(path, name)), f"no {name} under {path}"
    return path
