#!/usr/bin/env bash
# Set everything up, then audit the bundled sample network, print the report and draw it (out/).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
GRAPHAUDIT_NO_BROWSER=1 GRAPHAUDIT_EXTRAS="" bash "$root/scripts/setup.sh"  # no browser, no test tools
venv="${GRAPHAUDIT_VENV:-$root/.venv}"
# shellcheck source=bytecode.sh
. "$root/scripts/bytecode.sh"
keep_bytecode "$venv"
cd "$root"
GLOG_v="${GLOG_v:-3}" exec "$venv/bin/python" samples/tour.py "$@"
