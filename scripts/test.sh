#!/usr/bin/env bash
# Set everything up, then run the linter and the whole test suite (extra args go to pytest).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
venv="${GRAPHAUDIT_VENV:-$root/.venv}"
cd "$root"
"$venv/bin/ruff" check graphaudit tests samples benchmarks
GLOG_v="${GLOG_v:-3}" exec "$venv/bin/python" -m pytest "$@"
