#!/usr/bin/env bash
# The USB suite of the test command: prepares the fixture (packages, kernel,
# initramfs), builds the shipped binary (Swift runtime static, as in the .deb),
# and runs the pytest module that boots one QEMU guest for all scenarios.
set -euo pipefail
cd "$(dirname "$0")/../.."
Tests/USBFixture/setup.sh
scripts/bootstrap-venv.sh
if [ -z "${ITCB_DONGLE_RELEASE_BIN:-}" ]; then
    swift build -c release --static-swift-stdlib --product itcb-dongle --scratch-path .build-release 2>&1 \
        | grep -E "error|warning: unre|Compiling|Build" | tail -n 3
fi
exec .venv/bin/python -m pytest -q Tests/USBFixture "$@"
