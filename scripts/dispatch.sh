# Sourced by the scripts that run the whole suite (test.sh) and the oldest MindSpore's smoke run
# (test-oldest.sh): both run their tests in two pytest processes, split the same way
# (tests/conftest.py says why):
#
# `synchronous_tests PYTEST...` runs PYTEST (a pytest command line and its arguments) on the tests
# not marked `asynchronous`, MindSpore's PyNative kernels dispatched synchronously;
# `queued_tests PYTEST...` runs it on the tests marked `asynchronous`, in a process that queues
# its kernels from its start, as users run;
# `marking_asynchronous FILES...` prints those of FILES that mark tests so, one per line: only
# they need collecting for the queued run (the whole suite's collection costs ~20 s).
synchronous_tests() {
  GRAPHAUDIT_TEST_DISPATCH=synchronous "$@" -m "not asynchronous"
}

queued_tests() {
  GRAPHAUDIT_TEST_DISPATCH=asynchronous "$@" -m asynchronous
}

marking_asynchronous() {
  grep -l "pytest.mark.asynchronous" "$@" || true
}
