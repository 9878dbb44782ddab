# Sourced by the setup scripts: `quiet_pip PYTHON ARGS...` runs `PYTHON -m pip install -q ARGS`
# and shows only what needs reading. pip's notes that say nothing about this install (index
# locations this machine lacks, setuptools' editable-install banner, and, for the zoos, their
# own unmet pins that setup-zoos.sh explains) are dropped when the install succeeds; when it
# fails, everything pip printed is shown, unfiltered, and the script stops.
quiet_pip() {
  local py="$1"; shift
  local log status=0
  log="$(mktemp)"
  "$py" -m pip install -q --disable-pip-version-check "$@" >"$log" 2>&1 || status=$?
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
