"""A probe step that raises leaves training exactly as a never-audited twin would have it.

Each arm is a process of its own (``tests/probe_fault_twin.py``, started by ``tests/twins.py``),
seeded the same: one trains
three steps without graphaudit, the others first audit with ``probe=5`` while the user's code
raises on the third probe step — in the forward pass, the backward pass or the optimizer; a
RuntimeError, a KeyboardInterrupt or a SystemExit — then train the same three steps. Every
parameter (the optimizer's moments included) must be bit-identical to the twin's afterwards.

The losses must be identical too, with one exception MindSpore makes on its own: once the
same cell has been differentiated three times in a process, MindSpore 2.10 (PyNative, CPU)
computes later losses with a last-bit difference (shown without graphaudit: three
``value_and_grad`` calls before training shift the third loss by 1 ulp; the parameters stay
bit-identical). An optimizer fault on the third step comes after the third differentiation,
so its losses are compared to 1e-6.
"""

from __future__ import annotations

import json

import pytest
import twins

# a probe failing half-way, and its never-audited twin: with MindSpore's queue, as users run
pytestmark = pytest.mark.asynchronous

TWIN = twins.TESTS / "probe_fault_twin.py"
ARMS = [
    ("bn", "forward", "error"),
    ("bn", "backward", "keyboard"),
    ("bn", "optimizer", "exit"),
    ("dropout", "forward", "keyboard"),
    ("dropout", "backward", "exit"),
    ("dropout", "optimizer", "error"),
    ("both", "forward", "exit"),
    ("both", "backward", "error"),
    ("both", "optimizer", "keyboard"),
]
RAISED = {"error": "ProbeStepError", "keyboard": "KeyboardInterrupt", "exit": "SystemExit"}


def _result(process) -> dict:
    lines = [line for line in twins.finish(process).splitlines() if line.startswith("TWIN ")]
    assert lines, "the twin printed no TWIN line"
    return json.loads(lines[-1][5:])


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("probe-fault-twins")  # MindSpore's dumps, if any, land here

    def start(net: str, place: str, kind: str, audited: bool):
        return twins.start(TWIN, net, place, kind, "1" if audited else "0", cwd=folder)

    started = {(net, "-", "-", False): start(net, "none", "none", False) for net in ("bn", "dropout", "both")}
    started |= {(*arm, True): start(*arm, True) for arm in ARMS}
    return {key: _result(process) for key, process in started.items()}


@pytest.mark.slow
@pytest.mark.parametrize(("net", "place", "kind"), ARMS, ids=["-".join(arm) for arm in ARMS])
def test_training_after_a_failed_probe_matches_a_never_audited_twin(results, net, place, kind):
    twin, audited = results[(net, "-", "-", False)], results[(net, place, kind, True)]
    assert audited["raised"] and audited["audit"] == RAISED[kind], audited["audit"]
    assert audited["parameters"] == twin["parameters"]
    if place == "optimizer":
        assert audited["losses"] == pytest.approx(twin["losses"], rel=1e-6, abs=0)
    else:
        assert audited["losses"] == twin["losses"]
