# Sourced by the setup scripts.
#
# `fast_installer PYTHON` puts uv (a pip-compatible installer that downloads and unpacks in
# parallel) into PYTHON's virtualenv: a clean clone's main install took pip 84 s and uv 26 s on
# 2 cores, the same versions of every package (issue 40). Without uv (PyPI refuses it, say),
# the installs below go through pip, as before.
#
# `quiet_pip PYTHON ARGS...` installs ARGS (pip install's arguments) into PYTHON's virtualenv
# with uv when it is there, else with `PYTHON -m pip install -q`, and shows only what needs
# reading. pip's notes that say nothing about this install (index locations this machine
# lacks, setuptools' editable-install banner, and, for the zoos, their own unmet pins that
# setup-zoos.sh explains) are dropped when the install succeeds; when it fails, everything the
# installer printed is shown, unfiltered, and the script stops.
fast_installer() {
  local py="$1"
  [ -x "$(dirname "$py")/uv" ] || "$py" -m pip install -q --disable-pip-version-check uv >/dev/null 2>&1 \
    || echo "setup: uv could not be installed; installing with pip (slower)" >&2
}

quiet_pip() {
  local py="$1"; shift
  local log status=0 installed=no uv
  uv="$(dirname "$py")/uv"
  log="$(mktemp)"
  if [ -x "$uv" ]; then
    # copy, not hardlink: uv's cache and the virtualenv may lie on different file systems.
    # Not byte-compiled (pip compiles everything it installs; uv, so asked, took as long as pip):
    # the scripts that run Python keep what it compiles as it imports (scripts/bytecode.sh).
    if UV_LINK_MODE="${UV_LINK_MODE:-copy}" "$uv" pip install -q --python "$py" "$@" >"$log" 2>&1; then
      installed=yes
    else  # uv reads no pip configuration (an index only pip.conf names, say)
      echo "setup: uv failed (exit $?: $(tail -n 1 "$log")); installing with pip" >&2
    fi
  fi
  if [ "$installed" = no ]; then
    "$py" -m pip install -q --disable-pip-version-check "$@" >"$log" 2>&1 || status=$?
  fi
  if [ "$status" -ne 0 ]; then
    cat "$log" >&2
    rm -f "$log"
    echo "setup: pip install $* failed (exit $status); its whole output is above." >&2
    return "$status"
  fi
  grep -v -E \
    -e "Location '.*' is ignored" \
    -e "BuildBackendWarning: Editable installation" \
    -e "^[[:space:]]*(!!|\*+)[[:space:]]*$" \
    -e "Please be careful with folders in your working directory|name as your package as they may take precedence" \
    -e "with strategy, WheelFile\(wheel_path" \
    -e "dependency resolver does not currently take into account|^mind(yolo|ocr|audio|one) [0-9.]+ requires" \
    -e "^[[:space:]]*$" \
    "$log" >&2 || true
  rm -f "$log"
}
