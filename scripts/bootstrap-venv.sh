#!/usr/bin/env bash
# Creates .venv (Python >= 3.11) with the pinned test requirements; a no-op when
# the requirements did not change since the last run.
set -euo pipefail
cd "$(dirname "$0")/.."
requirements=Tests/requirements.txt
stamp=.venv/.requirements.sha256
want=$(sha256sum "$requirements" | cut -d' ' -f1)
if [ -x .venv/bin/python ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    exit 0
fi
python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
    || { echo "bootstrap-venv: Python 3.11 or newer is required (Bumble)"; exit 1; }
echo "bootstrap-venv: creating .venv with Bumble (pip install -r $requirements; a minute the first time)"
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -r "$requirements"
echo "$want" > "$stamp"
echo "bootstrap-venv: .venv ready ($(.venv/bin/python -c 'import bumble, importlib.metadata as m; print("bumble", m.version("bumble"))'))"
