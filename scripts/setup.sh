#!/usr/bin/env bash
# Make everything graphaudit needs exist on this machine, idempotently:
# a virtualenv in .venv with graphaudit (and, unless GRAPHAUDIT_EXTRAS="", its test
# dependencies), Graphviz's `dot`, and
# (unless GRAPHAUDIT_NO_BROWSER=1) Chromium for the browser test.
# Sourced by run-sample.sh and test.sh; safe to run on its own.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${GRAPHAUDIT_VENV:-$root/.venv}"
python="${PYTHON:-python3}"
# shellcheck source=quiet-pip.sh
. "$root/scripts/quiet-pip.sh"

# System programs: Graphviz's dot draws the graphs; Chromium (with its driver) runs the
# HTML report's browser test. Both come from Debian's packages.
missing=()
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
if [ "${GRAPHAUDIT_NO_BROWSER:-0}" != 1 ]; then
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]} (Debian packages)..." >&2
  if command -v apt-get >/dev/null 2>&1; then
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "setup: no apt-get here; install ${missing[*]} with your package manager." >&2
    exit 1
  fi
fi

if [ ! -x "$venv/bin/python" ]; then
  echo "setup: creating virtualenv $venv" >&2
  "$python" -m venv "$venv"
fi

# What to install: graphaudit alone (GRAPHAUDIT_EXTRAS="", for the sample) or with an extra
# (the default, "test": the test tools and mindcv). Reinstall only when the declared
# dependencies changed; what the test extra installed also serves the sample.
extras="${GRAPHAUDIT_EXTRAS-test}"
want="$(sha256sum "$root/pyproject.toml" | cut -d' ' -f1)"
stamp="$venv/.graphaudit-deps${extras:+-$extras}"
if [ -z "$extras" ] && [ -f "$venv/.graphaudit-deps-test" ] && [ "$(cat "$venv/.graphaudit-deps-test")" = "$want" ]; then
  stamp="$venv/.graphaudit-deps-test"
fi
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing graphaudit${extras:+ with [$extras]} into $venv (first time: a few minutes)" >&2
  fast_installer "$venv/bin/python"
  quiet_pip "$venv/bin/python" -e "$root${extras:+[$extras]}"
  echo "$want" > "$stamp"
fi
if [ "$extras" = test ]; then GRAPHAUDIT_VENV="$venv" bash "$root/scripts/setup-zoos.sh"; fi  # the model zoos of tests/test_zoos.py
