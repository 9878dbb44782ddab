#!/usr/bin/env bash
# Set everything up, then run the linter and the whole test suite (extra args go to pytest, in
# one process). Without extra arguments the suite runs in three parts side by side (issue 40:
# a clean clone's run, one part after the other, took 27 minutes on 2 cores):
# - most tests, on GRAPHAUDIT_TEST_WORKERS (default 2) pytest-xdist workers, each taking whole
#   test files (module fixtures are built once per file; the files that share what a process
#   builds, such as the sample audits, go to one worker: SHARED_BUILDS in tests/conftest.py),
#   MindSpore's PyNative kernels dispatched synchronously (tests/conftest.py says why); a worker
#   that crashes ends the run (replaced, the file-by-file scheduling waited forever);
# - the tests marked `asynchronous`, in one process that queues its kernels, as users run;
# - a smoke subset on the oldest MindSpore graphaudit supports (scripts/test-oldest.sh, split
#   the same way; GRAPHAUDIT_OLDEST=0 skips it), from the start: its virtualenv installs while
#   this one does.
# The side parts' output is printed when the suite ends; the run fails if any part fails.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${GRAPHAUDIT_VENV:-$root/.venv}"
# shellcheck source=bytecode.sh
. "$root/scripts/bytecode.sh"
# shellcheck source=dispatch.sh
. "$root/scripts/dispatch.sh"
keep_bytecode "$venv"
cd "$root"
whole=$(( $# == 0 ))
started=$SECONDS
oldest_log=""
if [ "$whole" = 1 ] && [ "${GRAPHAUDIT_OLDEST:-1}" != 0 ]; then
  oldest_log="$(mktemp "${TMPDIR:-/tmp}/graphaudit-oldest.XXXXXX")"
  bash "$root/scripts/test-oldest.sh" > "$oldest_log" 2>&1 &
  oldest=$!
fi
# the side parts stop with this script, whatever stops it
trap 'jobs -p | xargs -r kill 2>/dev/null || true; rm -f "$oldest_log" "${queued_log:-}"' EXIT
bash "$root/scripts/setup.sh"
echo "setup: $(( SECONDS - started )) s" >&2
"$venv/bin/ruff" check graphaudit tests samples benchmarks scripts
status=0
# finish_part PID LOG TITLE: wait for a side part, print what it printed; its failure fails the run
finish_part() {
  local part_status=0
  wait "$1" || part_status=$?
  echo "--- $3, beside the suite ---"
  cat "$2"
  [ "$part_status" = 0 ] || echo "$3 failed (exit $part_status)" >&2
  [ "$status" != 0 ] || status=$part_status
}
if [ "$whole" = 1 ]; then
  queued_log="$(mktemp "${TMPDIR:-/tmp}/graphaudit-queued.XXXXXX")"
  export GLOG_v="${GLOG_v:-3}"
  mapfile -t queued_files < <(marking_asynchronous tests/test_*.py)
  queued_tests "$venv/bin/python" -m pytest "${queued_files[@]}" > "$queued_log" 2>&1 &
  queued=$!
  synchronous_tests "$venv/bin/python" -m pytest \
    -n "${GRAPHAUDIT_TEST_WORKERS:-2}" --dist loadfile --max-worker-restart 0 || status=$?
  finish_part "$queued" "$queued_log" "the tests marked asynchronous, in a process that queues MindSpore's kernels"
else
  GLOG_v="${GLOG_v:-3}" "$venv/bin/python" -m pytest "$@" || status=$?
fi
if [ -n "$oldest_log" ]; then
  finish_part "$oldest" "$oldest_log" "the smoke run on the oldest MindSpore (scripts/test-oldest.sh)"
fi
echo "tests: $(( SECONDS - started )) s in all" >&2
exit "$status"
