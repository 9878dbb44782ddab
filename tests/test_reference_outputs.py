"""GA640 on planted port bugs: each found at its cell, each faithful twin silent.

The originals are PyTorch models (``scripts/references/make_planted.py``), dumped with their
weights and every module's inputs and outputs into ``tests/references/planted/``, and exported
to ONNX beside them: every bug is found alike from either. Each port of
``tests/reference_ports.py`` is the faithful MindSpore port of one of them, or the same port
with one bug planted: the kinds issue 35 lists. A bug that changes the structure (a layer or
a bias dropped) is GA630's, and the output comparison is then not run, saying why.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mindspore import Tensor, nn
from reference_ports import CNN, MLP, PLANTED, PLANTED_BUGS, PORTS, audit

import graphaudit

#: bug -> the attribute check's finding as well: the dump and the ONNX file record each layer's
#: attributes (epsilon, activation kind, pooling kind, softmax axis), so the bug is also named by
#: what differs (GA635-GA638), at the same cell.
ATTRIBUTE_FINDINGS = {
    "swapped-activation": ("GA636", "act"),
    "epsilon": ("GA635", "norm"),
    "batchnorm-epsilon": ("GA635", "bn"),
    "pool-kind": ("GA638", "pool"),
    "softmax-axis": ("GA636", "attn.softmax"),
}


#: How the original is given: the folder ``python -m graphaudit.reference`` dumps (its recorded
#: outputs), or the ONNX file ``torch.onnx.export`` writes (run in onnxruntime on the batch).
KINDS = ("dump", "onnx")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("original", sorted(PORTS))
def test_a_faithful_port_computes_what_its_original_computed(original, kind):
    report = audit(PORTS[original](), original, kind)
    assert "GA640" in report.checks_run, report.skipped
    assert report.ok and not report.findings, str(report)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("bug", sorted(PLANTED_BUGS))
def test_a_planted_port_bug_is_found_at_its_cell(bug, kind):
    port, original, expected = PLANTED_BUGS[bug]
    report = audit(port(bug), original, kind)
    found = sorted((f.check_id, f.subject) for f in report.findings if f.severity != "info")
    assert found == sorted([expected, *([ATTRIBUTE_FINDINGS[bug]] if bug in ATTRIBUTE_FINDINGS else [])]), (
        str(report)
    )
    if expected[0] != "GA640":  # the structure differs: the outputs are not compared, and it says why
        assert "do not pair one to one" in report.skipped["GA640"]


class FailsOnTheOriginalsWeights(MLP):
    """Raises in the comparison's pass (the original's weights loaded), not in the audit's own."""

    def construct(self, x):
        if float(self.fc2.bias.asnumpy()[0]) != 0.0:
            raise RuntimeError("a construct that fails on some weights")
        return super().construct(x)


def test_a_comparison_pass_that_fails_half_way_puts_the_ports_weights_back():
    net = FailsOnTheOriginalsWeights()
    net.fc2.bias.set_data(Tensor(np.zeros(4, np.float32)))
    before = {p.name: p.asnumpy().copy() for p in net.get_parameters()}
    report = audit(net, "mlp")
    assert "raised RuntimeError: a construct that fails on some weights" in report.skipped["GA640"]
    assert all(np.array_equal(p.asnumpy(), before[p.name]) for p in net.get_parameters())


def test_inputs_of_another_batch_are_refused_naming_both():
    folder = PLANTED / "mlp"
    with pytest.raises(graphaudit.InputError, match=r"is not the batch the original was dumped on"):
        graphaudit.audit(MLP(), inputs=Tensor(np.ones((2, 8), np.float32)), reference=str(folder))


def test_without_inputs_the_dumps_batch_is_compared():
    report = graphaudit.audit(MLP("swapped-activation"), reference=str(PLANTED / "mlp"), select=["GA64"])
    assert [(f.check_id, f.subject) for f in report.findings] == [("GA640", "act")]


def test_a_weights_file_alone_says_the_outputs_are_not_compared():
    weights = str(Path(__file__).resolve().parent.parent / "samples" / "GA630" / "original.safetensors")
    report = graphaudit.audit(nn.Dense(2, 2), reference=weights, select=["GA64"])
    assert "holds the original's weights only" in report.skipped["GA640"]


def test_an_output_of_another_shape_is_a_divergence():
    from graphaudit.capture.reference.compare import CallFigures, Comparison, Figures

    same = Figures.of(np.ones(3, np.float32), np.ones(3, np.float32))
    calls = (
        CallFigures("conv", "conv", 0, "float32", same, same),
        CallFigures(
            "pool", "pool", 0, "float32", None, same, "", "[(1, 4, 16, 16)] against [(1, 4, 15, 15)]"
        ),
    )
    events = ((0, "input"), (0, "output"), (1, "input"), (1, "output"))
    assert Comparison(calls, events, ()).first_divergence() == (calls[1], "output")


def test_an_onnx_original_given_another_number_of_inputs_is_refused():
    from graphaudit.capture.reference.onnx_run import run_onnx

    with pytest.raises(
        graphaudit.GraphAuditError, match=r"takes 1 inputs \(.+\), but the batch has 2 tensors"
    ):
        run_onnx(str(PLANTED / "mlp.onnx"), [np.ones((2, 8), np.float32), np.ones(2, np.float32)])


def test_an_onnx_original_needs_the_batch():
    report = graphaudit.audit(MLP(), reference=str(PLANTED / "mlp.onnx"), select=["GA64"])
    assert "is run on the audit's batch: pass inputs=" in report.skipped["GA640"]


def test_an_onnx_export_that_folded_batchnorm_is_said_not_compared():
    """torch.onnx.export's defaults fold BatchNorm into the conv: the file's weights are not the original's."""
    batch = Tensor(np.load(PLANTED / "cnn" / "inputs.npz")["0"])
    report = graphaudit.audit(
        CNN(), inputs=batch, reference=str(PLANTED / "cnn_folded.onnx"), select=["GA63", "GA64"]
    )
    assert not report.findings  # no weight "missing" or "added": nothing compared
    assert "folded them into the convolutions" in report.skipped["GA630"]
    assert "TrainingMode.PRESERVE" in report.skipped["GA640"]
