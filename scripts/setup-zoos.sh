#!/usr/bin/env bash
# Install MindSpore's model zoos that tests/test_zoos.py audits (mindyolo, mindocr, mindaudio,
# mindone) into graphaudit's virtualenv, idempotently: a stamp file records what was installed,
# and a second run with this script unchanged does nothing.
#
# The zoos pin old MindSpore and NumPy releases (mindyolo and mindocr want mindspore<=2.3,
# mindone numpy/transformers pins...): installed with their dependencies they would downgrade
# MindSpore. So each zoo is installed with --no-deps, and then only the pure-Python packages
# they import, each pinned, under a constraint that holds mindspore and numpy at the versions
# already installed (the script fails if either changed).
#
# `pip check` then reports the zoos' own pins as unmet (e.g. "mindyolo 0.5.0 has requirement
# mindspore...", "mindone 0.5.0 has requirement numpy..."): that is expected and harmless, the
# tests run them on the installed MindSpore with the shims in tests/zoo/shims.py.
#
# Called by setup.sh when the test extra is installed; safe to run on its own.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${GRAPHAUDIT_VENV:-$root/.venv}"
py="$venv/bin/python"
want="$(sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1)"
stamp="$venv/.graphaudit-zoos"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi

zoos=(mindyolo==0.5.0 mindocr==0.5.0 mindaudio==0.3.0 mindone==0.5.0)
# What the zoos import, beyond MindSpore and NumPy (found by importing what the tests build):
deps=(
  # mindyolo
  opencv-python-headless==4.11.0.86 tqdm==4.70.1 PyYAML==6.0.4
  # mindocr (huggingface_hub>=1.0 lacks repo_type_and_id_from_hf_id, imported by mindocr's layoutxlm)
  shapely==2.2.0 pyclipper==1.4.0 matplotlib==3.11.2 addict==2.4.0 sentencepiece==0.2.3
  huggingface_hub==0.36.2 lmdb==3.0.0 seqeval==1.2.2 pycocotools==2.0.11
  # mindaudio
  wget==3.2 mir_eval==0.8.2 python-Levenshtein==0.27.5 easydict==1.14
  # mindone (mindone.transformers is written against transformers 4.57.1, its exact pin)
  omegaconf==2.4.0 transformers==4.57.1
)

versions() {
  "$py" -c "import importlib.metadata as m; print('mindspore==' + m.version('mindspore')); print('numpy==' + m.version('numpy'))"
}
held="$(mktemp)"
trap 'rm -f "$held"' EXIT
versions > "$held"
# pip's resolver lists the zoos' own unmet pins after each install (expected, see above): not shown.
# shellcheck source=quiet-pip.sh
. "$root/scripts/quiet-pip.sh"
echo "setup-zoos: installing ${zoos[*]} (--no-deps) and their pure-Python imports into $venv" >&2
quiet_pip "$py" --no-deps "${zoos[@]}"
quiet_pip "$py" -c "$held" "${deps[@]}"
if [ "$(versions)" != "$(cat "$held")" ]; then
  echo "setup-zoos: the install changed MindSpore or NumPy: $(versions | tr '\n' ' ') (was $(tr '\n' ' ' < "$held"))" >&2
  exit 1
fi
echo "$want" > "$stamp"
