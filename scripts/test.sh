#!/usr/bin/env bash
# Set everything up, then run the linter and the whole test suite (extra args go to pytest).
# Without extra arguments it also runs a smoke subset on the oldest MindSpore graphaudit
# supports (scripts/test-oldest.sh; GRAPHAUDIT_OLDEST=0 skips it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
venv="${GRAPHAUDIT_VENV:-$root/.venv}"
cd "$root"
"$venv/bin/ruff" check graphaudit tests samples benchmarks scripts
GLOG_v="${GLOG_v:-3}" "$venv/bin/python" -m pytest "$@"
if [ $# -eq 0 ] && [ "${GRAPHAUDIT_OLDEST:-1}" != 0 ]; then
  bash "$root/scripts/test-oldest.sh"
fi
