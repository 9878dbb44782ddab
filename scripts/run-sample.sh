#!/usr/bin/env bash
# Set everything up, then capture the bundled sample network and print what graphaudit sees.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
venv="${GRAPHAUDIT_VENV:-$root/.venv}"
cd "$root"
GLOG_v="${GLOG_v:-3}" exec "$venv/bin/python" samples/tour.py "$@"
