#!/usr/bin/env bash
# Set everything up, then run the linter and the whole test suite (extra args go to pytest).
# Without extra arguments the suite runs on GRAPHAUDIT_TEST_WORKERS (default 2) pytest-xdist
# workers, each taking whole test files (module fixtures, such as the shared sample audits, are
# built once per file), and a smoke subset runs on the oldest MindSpore graphaudit supports
# (scripts/test-oldest.sh; GRAPHAUDIT_OLDEST=0 skips it) beside them, from the start: its
# virtualenv installs while this one does, its tests run while the suite's workers wait on
# their own processes (issue 40: a clean clone's run, one after the other, was 27 minutes).
# Its output is printed when the suite ends; the run fails if either fails.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${GRAPHAUDIT_VENV:-$root/.venv}"
cd "$root"
whole=$(( $# == 0 ))
started=$SECONDS
oldest_log=""
if [ "$whole" = 1 ] && [ "${GRAPHAUDIT_OLDEST:-1}" != 0 ]; then
  oldest_log="$(mktemp "${TMPDIR:-/tmp}/graphaudit-oldest.XXXXXX")"
  bash "$root/scripts/test-oldest.sh" > "$oldest_log" 2>&1 &
  oldest=$!
  trap 'kill "$oldest" 2>/dev/null || true; rm -f "$oldest_log"' EXIT
fi
bash "$root/scripts/setup.sh"
echo "setup: $(( SECONDS - started )) s" >&2
"$venv/bin/ruff" check graphaudit tests samples benchmarks scripts
if [ "$whole" = 1 ]; then
  set -- -n "${GRAPHAUDIT_TEST_WORKERS:-2}" --dist loadfile
fi
status=0
GLOG_v="${GLOG_v:-3}" "$venv/bin/python" -m pytest "$@" || status=$?
if [ -n "$oldest_log" ]; then
  oldest_status=0
  wait "$oldest" || oldest_status=$?
  echo "--- the smoke run on the oldest MindSpore (scripts/test-oldest.sh), beside the suite ---"
  cat "$oldest_log"
  [ "$oldest_status" = 0 ] || echo "scripts/test-oldest.sh failed (exit $oldest_status)" >&2
  [ "$status" != 0 ] || status=$oldest_status
fi
echo "tests: $(( SECONDS - started )) s in all" >&2
exit "$status"
