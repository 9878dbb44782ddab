# Sourced by the scripts that run the tests and the sample: `keep_bytecode VENV` lets Python
# keep the modules it compiles (.pyc), under VENV/.pycache (PYTHONPYCACHEPREFIX), outside the
# checkout's own folders.
#
# Why: the installs do not byte-compile (uv, scripts/quiet-pip.sh: compiling everything they
# install cost more than the install itself), and where PYTHONDONTWRITEBYTECODE is set, as on
# this project's machines, nothing would ever be kept: every fresh process (the suite starts
# dozens: twins, the command line, msrun's ranks) would compile MindSpore's modules again
# (`import mindspore` 11.7 s against 2.9 s), and every pytest process would rewrite the asserts
# of every test module again. A PYTHONPYCACHEPREFIX already set is left as it is.
keep_bytecode() {
  if [ -z "${PYTHONPYCACHEPREFIX:-}" ]; then
    export PYTHONPYCACHEPREFIX="$1/.pycache"
  fi
  unset PYTHONDONTWRITEBYTECODE
}
