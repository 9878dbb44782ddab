#!/usr/bin/env bash
# Run a smoke subset of the tests on the oldest MindSpore graphaudit supports (pyproject.toml:
# mindspore>=2.7), in a virtualenv of its own (.venv-oldest), set up idempotently.
# Extra arguments go to pytest. GRAPHAUDIT_OLDEST_MINDSPORE overrides the version.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${GRAPHAUDIT_OLDEST_VENV:-$root/.venv-oldest}"
# shellcheck source=bytecode.sh
. "$root/scripts/bytecode.sh"
keep_bytecode "$venv"
version="${GRAPHAUDIT_OLDEST_MINDSPORE:-2.7.2}"
python="${PYTHON:-python3}"
# shellcheck source=quiet-pip.sh
. "$root/scripts/quiet-pip.sh"
# shellcheck source=dispatch.sh
. "$root/scripts/dispatch.sh"
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
stamp="$venv/.graphaudit-oldest"
want="$version $(sha256sum "$root/pyproject.toml" | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing mindspore==$version and graphaudit into $venv" >&2
  fast_installer "$venv/bin/python"
  quiet_pip "$venv/bin/python" "mindspore==$version" -e "$root" pytest hypothesis jsonschema
  echo "$want" > "$stamp"
fi
cd "$root"
echo "smoke tests on mindspore $("$venv/bin/python" -c 'import mindspore; print(mindspore.__version__)')" >&2
smoke=(tests/test_capture.py tests/test_audit.py tests/test_samples.py tests/test_training_setups.py
  tests/test_isolation_and_errors.py tests/test_loss_pairing.py)
# the golden output (samples/*/bad.expected) holds the figures the newest MindSpore measures
export GRAPHAUDIT_GOLDEN=off GLOG_v="${GLOG_v:-3}"
pytest=("$venv/bin/python" -m pytest -q -p no:randomly)
if [ $# -gt 0 ]; then  # one run, the dispatch chosen by what is selected (tests/conftest.py)
  exec "${pytest[@]}" "${smoke[@]}" "$@"
fi
# As in the main suite (scripts/test.sh, tests/conftest.py): the tests marked asynchronous in a
# process that queues MindSpore's kernels from its start, the others dispatched synchronously
# (the whole smoke run queued: 162 s, 234 s of CPU; split: 95 s, 107 s of CPU, on an idle machine)
status=0
synchronous_tests "${pytest[@]}" "${smoke[@]}" || status=$?
mapfile -t queued_files < <(marking_asynchronous "${smoke[@]}")
queued_tests "${pytest[@]}" "${queued_files[@]}" || status=$?
exit "$status"
