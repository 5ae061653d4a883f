#!/usr/bin/env bash
# The USB suite of the test command: prepares the fixture (packages, kernel,
# initramfs), builds the shipped binary (Embedded Swift, as in the .deb),
# and runs the pytest module that boots one QEMU guest for all scenarios.
set -euo pipefail
cd "$(dirname "$0")/../.."
Tests/USBFixture/setup.sh
scripts/bootstrap-venv.sh
if [ -z "${ITCB_DONGLE_RELEASE_BIN:-}" ]; then
    scripts/build-embedded.sh > /dev/null
fi
exec .venv/bin/python -m pytest -q Tests/USBFixture "$@"
