#!/usr/bin/env bash
# Set everything up, then run the linter and the whole test suite (extra args go to pytest).
# Without extra arguments the suite runs on GRAPHAUDIT_TEST_WORKERS (default 2) pytest-xdist
# workers, each taking whole test files (module fixtures, such as the shared sample audits, are
# built once per file), and a smoke subset then runs on the oldest MindSpore graphaudit
# supports (scripts/test-oldest.sh; GRAPHAUDIT_OLDEST=0 skips it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
venv="${GRAPHAUDIT_VENV:-$root/.venv}"
cd "$root"
"$venv/bin/ruff" check graphaudit tests samples benchmarks scripts
whole=$(( $# == 0 ))
if [ "$whole" = 1 ]; then
  set -- -n "${GRAPHAUDIT_TEST_WORKERS:-2}" --dist loadfile
fi
GLOG_v="${GLOG_v:-3}" "$venv/bin/python" -m pytest "$@"
if [ "$whole" = 1 ] && [ "${GRAPHAUDIT_OLDEST:-1}" != 0 ]; then
  bash "$root/scripts/test-oldest.sh"
fi
