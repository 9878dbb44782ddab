"""Code compiled with ``mindspore.jit`` is traced like the rest (issue 19, pattern 1).

The traced pass runs with ``MS_JIT=0``: MindSpore then runs every ``jit``-compiled function
as the Python it is, so what runs inside it is part of the graph. Each network here gave
false findings before (every cell "never called", a used Dense "never called", parameters
"not reaching the output") or missed a real one (GA401 behind a ``@jit`` construct).
"""

from __future__ import annotations

import os

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, jit, nn, ops

import graphaudit
from graphaudit import graph as g

RNG = np.random.default_rng(0)
X = Tensor(RNG.standard_normal((8, 16)).astype(np.float32))
Y = Tensor(RNG.integers(0, 2, (8,)).astype(np.float32))


class SigmoidHead(nn.Cell):
    """Ends in nn.Sigmoid, trained with BCEWithLogitsLoss: GA401's bug, behind a @jit construct."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.SequentialCell([nn.Dense(16, 8), nn.ReLU()])
        self.score = nn.Dense(8, 1)
        self.squash = nn.Sigmoid()

    @jit
    def construct(self, x):
        return self.squash(self.score(self.body(x))).squeeze(-1)


class JitBlock(nn.Cell):
    """A sub-block compiled on its own: ``used`` runs, ``spare`` never does."""

    def __init__(self) -> None:
        super().__init__()
        self.used = nn.Dense(16, 8)
        self.spare = nn.Dense(16, 8)

    @jit
    def construct(self, x):
        return ops.relu(self.used(x))


class WithJitBlock(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.block = JitBlock()
        self.head = nn.Dense(8, 1)

    def construct(self, x):
        return self.head(self.block(x)).squeeze(-1)


@jit
def relative_bias(table, scale):
    """A module-level helper reading parameters, like mindone's DeBERTa relative positions."""
    return ops.tanh(table) * scale


@jit(jit_level="O1", fullgraph=False)
def gated(x, gate):
    return x * ops.sigmoid(gate)


class WithJitHelper(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(16, 8)
        self.table = ms.Parameter(Tensor(RNG.standard_normal((8,)).astype(np.float32)), name="table")
        self.scale = ms.Parameter(Tensor(np.ones((1,), np.float32)), name="scale")
        self.gate = ms.Parameter(Tensor(np.zeros((8,), np.float32)), name="gate")
        self.head = nn.Dense(8, 1)

    def construct(self, x):
        h = self.fc(x) + relative_bias(self.table, self.scale)
        return self.head(gated(h, self.gate)).squeeze(-1)


class Plain(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(16, 8)
        self.head = nn.Dense(8, 1)

    def construct(self, x):
        return self.head(ops.relu(self.fc(x))).squeeze(-1)


@jit
class WholeClass(Plain):
    """A Cell subclass compiled as a whole: ``jit`` on the class."""


def _loud(report, *check_ids):
    return [f for f in report.findings if f.check_id in check_ids and f.severity != "info"]


@pytest.fixture(params=["pynative", "graph"])
def script_mode(request):
    """The mode the user's script set: the capture must see the same in both."""
    before = ms.get_context("mode")
    ms.set_context(mode=ms.GRAPH_MODE if request.param == "graph" else ms.PYNATIVE_MODE)
    yield request.param
    ms.set_context(mode=before)


def test_jit_construct_sigmoid_before_logits_loss_is_ga401(script_mode):
    net = SigmoidHead()
    report = graphaudit.audit(net, inputs=(X,), loss_fn=nn.BCEWithLogitsLoss(), label=Y)
    assert report.by_check("GA401"), str(report)
    assert not _loud(report, "GA301"), str(report)


def test_jit_sub_block_used_dense_is_called_and_spare_is_not(script_mode):
    report = graphaudit.audit(WithJitBlock(), inputs=(X,), loss_fn=nn.BCEWithLogitsLoss(), label=Y)
    never_called = {s for f in report.by_check("GA301") for s in (f.subject, *f.subjects)}
    assert "block.spare" in never_called, str(report)
    assert "block.used" not in never_called, str(report)
    assert "block" not in never_called and "head" not in never_called, str(report)


def test_jit_helper_functions_reading_parameters_reach_the_output(script_mode):
    report = graphaudit.audit(WithJitHelper(), inputs=(X,), loss_fn=nn.BCEWithLogitsLoss(), label=Y)
    assert not _loud(report, "GA301", "GA302"), str(report)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: WholeClass(), id="jit-on-the-class"),
        pytest.param(lambda: _jit_instance(Plain()), id="jit(cell)-assigned-to-construct"),
        pytest.param(lambda: _jit_method(Plain(), jit_level="O1"), id="jit(method, options)"),
    ],
)
def test_every_form_of_jit_is_traced(make):
    net = make()
    graph = graphaudit.to_networkx(net, inputs=(X,))
    called = {d["path"] for _, d in graph.nodes(data=True) if d["kind"] == g.CALL}
    assert {"fc", "head"} <= called, called
    root = graph.nodes[g.cell_node("")]
    assert root["compiled"] == "jit", root


def _jit_instance(net):
    net.construct = jit(net)
    return net


def _jit_method(net, **options):
    net.construct = jit(net.construct, **options)
    return net


def test_the_cell_returned_by_jit_of_a_cell_is_audited():
    """``jit(net)`` returns the compiled construct bound to *net*: the audit takes it for *net*."""
    report = graphaudit.audit(jit(SigmoidHead()), inputs=(X,), loss_fn=nn.BCEWithLogitsLoss(), label=Y)
    assert report.by_check("GA401"), str(report)


def test_compiled_cells_and_functions_are_marked_and_listed(tmp_path):
    graph = graphaudit.to_networkx(WithJitBlock(), inputs=(X,))
    assert graph.nodes[g.cell_node("block")]["compiled"] == "jit"
    assert graph.nodes[g.cell_node("")]["compiled"] == ""
    helpers = graphaudit.to_networkx(WithJitHelper(), inputs=(X,))
    root = helpers.nodes[g.cell_node("")]
    assert g.compiled_functions(root) == ["gated", "relative_bias"], root
    report = graphaudit.audit(WithJitBlock(), inputs=(X,))
    assert "block (JitBlock.construct, @jit)" in str(report), str(report)
    assert report.to_dict()["compiled"] == [{"path": "block", "what": "JitBlock.construct", "how": "jit"}]
    assert "JitBlock · 272 params · @jit" in report.render(tmp_path / "net.dot").read_text()


def test_graph_mode_script_marks_the_network_compiled_as_a_whole(script_mode):
    graph = graphaudit.to_networkx(Plain(), inputs=(X,))
    expected = "graph-mode" if script_mode == "graph" else ""
    assert graph.nodes[g.cell_node("")]["compiled"] == expected


def test_ms_jit_and_the_mode_are_restored_even_when_the_pass_fails(monkeypatch, script_mode):
    class Broken(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Dense(16, 8)

        @jit
        def construct(self, x):
            return self.fc(x).reshape(7, -1, 5)  # 64 values do not reshape to (7, ?, 5)

    mode = ms.get_context("mode")
    for before in (None, "1"):
        if before is None:
            monkeypatch.delenv("MS_JIT", raising=False)
        else:
            monkeypatch.setenv("MS_JIT", before)
        with pytest.raises(graphaudit.errors.ForwardError):
            graphaudit.to_networkx(Broken(), inputs=(X,))
        assert os.environ.get("MS_JIT") == before
        assert ms.get_context("mode") == mode
        graphaudit.to_networkx(SigmoidHead(), inputs=(X,))
        assert os.environ.get("MS_JIT") == before
        assert ms.get_context("mode") == mode


# -- GA712 / GA713 compile exactly what the user compiles ----------------------------------
class TriedOutside(nn.Cell):
    """Python only graph mode refuses (try/except) outside the @jit block; the block compiles."""

    def __init__(self) -> None:
        super().__init__()
        self.block = JitBlock()
        self.head = nn.Dense(8, 1)

    def construct(self, x):
        try:
            h = self.block(x)
        except ValueError:
            h = x[:, :8]
        return self.head(h).squeeze(-1)


class TriedInside(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(16, 8)

    @jit
    def construct(self, x):
        try:
            h = self.fc(x)
        except ValueError:
            h = x[:, :8]
        return h


class Outer(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.inner = TriedInside()
        self.head = nn.Dense(8, 1)

    def construct(self, x):
        return self.head(self.inner(x)).squeeze(-1)


def _graph_mode_audit(net):
    optimizer = nn.SGD(net.trainable_params(), 0.01)
    return graphaudit.audit(
        net, optimizer, inputs=(X,), label=Y, loss_fn=nn.BCEWithLogitsLoss(), graph_mode=True
    )


def test_ga712_does_not_compile_what_the_user_runs_as_python():
    """Before: the whole network was compiled in GRAPH_MODE, and its Python-only try/except reported."""
    report = _graph_mode_audit(TriedOutside())
    assert {"GA712", "GA713"} <= set(report.checks_run), report.skipped
    assert not _loud(report, "GA712", "GA713"), str(report)


def test_ga712_reports_a_jit_block_that_does_not_compile():
    report = _graph_mode_audit(Outer())
    (finding,) = report.by_check("GA712")
    assert finding.subject == "inner" and "does not compile with mindspore.jit" in finding.message, finding
    assert os.environ.get("MS_JIT") is None or os.environ.get("MS_JIT") != "0"
