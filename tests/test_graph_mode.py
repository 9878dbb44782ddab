"""graph_mode=True: compile in GRAPH_MODE, report failures on the cell and line, compare, put everything back.

The networks live in this file (a real file: MindSpore compiles ``construct`` from its
source). Every test runs in a scratch working folder (conftest.py); MindSpore's
``rank_0/om/analyze_fail.ir`` must not appear there, nor anywhere graphaudit leaves it.
"""

from __future__ import annotations

import os

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn, ops

import graphaudit
from graphaudit.capture.compilation.graph_mode import redirected_dumps, run_in_graph_mode


class OneBranch(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 3)

    def construct(self, x):
        y = self.fc(x)
        if x.sum() > 0:  # true for the test's batch: PyNative runs
            out = y
        return out  # line of the failure


class Tried(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 4)

    def construct(self, x):
        try:
            y = self.fc(x)
        except ValueError:
            y = x
        return y


class Outer(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.block = Tried()
        self.head = nn.Dense(4, 3)

    def construct(self, x):
        return self.head(self.block(x))


class Aliased(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 3)
        self.out = nn.Dense(3, 3)

    def construct(self, x):
        h = self.fc(x)
        g = h
        g[:, 0] = 0.0
        return self.out(h) + g


class Good(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 3)
        self.bn = nn.BatchNorm1d(3)
        self.drop = nn.Dropout(p=0.5)

    def construct(self, x):
        return self.drop(ops.relu(self.bn(self.fc(x))))


X = Tensor(np.arange(8).reshape(2, 4).astype(np.float32))
Y = Tensor(np.array([0, 1], np.int32))


def audit(net, **kw):
    return graphaudit.audit(
        net,
        nn.SGD(net.trainable_params(), 0.1),
        inputs=X,
        label=Y,
        loss_fn=nn.CrossEntropyLoss(),
        graph_mode=True,
        **kw,
    )


def line_of(text: str) -> int:
    with open(__file__, encoding="utf-8") as source:
        return next(i for i, line in enumerate(source, 1) if text in line)


def no_dumps() -> bool:
    return not os.path.exists("rank_0")


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_a_compile_failure_is_one_finding_on_the_cell_and_line(mode):
    before = ms.get_context("mode")
    ms.set_context(mode=mode)
    try:
        report = audit(OneBranch().set_train(True))
        assert ms.get_context("mode") == mode
    finally:
        ms.set_context(mode=before)
    (finding,) = report.by_check("GA712")
    assert finding.severity == "error" and finding.subject == "(root)"
    assert f"test_graph_mode.py:{line_of('return out  # line of the failure')}" in finding.message
    assert "not defined in false branch" in finding.message
    assert "C++" not in finding.message and "analyze_fail" not in finding.message
    assert no_dumps()


def test_a_sub_cell_that_does_not_parse_is_found_behind_its_call():
    report = audit(Outer())
    (finding,) = report.by_check("GA712")
    assert finding.subject == "block" and finding.nodes == ("cell:block",)
    assert f"test_graph_mode.py:{line_of('        try:')}" in finding.message and "Tried" in finding.message
    assert "Unsupported statement 'Try'" in finding.message
    assert no_dumps()


def test_an_output_that_differs_between_modes_is_reported():
    report = audit(Aliased())
    (finding,) = report.by_check("GA713")
    assert finding.severity == "warning" and "differ by up to" in finding.message
    assert not report.by_check("GA712")


def test_a_good_network_compiles_trains_and_agrees_and_everything_is_put_back():
    net = Good().set_train(True)
    optimizer = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    values = {p.name: p.asnumpy().tobytes() for p in [*net.get_parameters(), *optimizer.get_parameters()]}
    flags = [(name, c.training, c._phase) for name, c in net.cells_and_names()]
    mode = ms.get_context("mode")
    os.environ["MS_OM_PATH"] = "/nonexistent/user/setting"
    try:
        report = graphaudit.audit(
            net, optimizer, inputs=X, label=Y, loss_fn=nn.CrossEntropyLoss(), graph_mode=True
        )
        assert os.environ["MS_OM_PATH"] == "/nonexistent/user/setting"
    finally:
        del os.environ["MS_OM_PATH"]
    assert {"GA712", "GA713"} <= set(report.checks_run)
    assert not report.by_check("GA712") and not report.by_check("GA713")
    assert {
        p.name: p.asnumpy().tobytes() for p in [*net.get_parameters(), *optimizer.get_parameters()]
    } == values
    assert [(name, c.training, c._phase) for name, c in net.cells_and_names()] == flags
    assert ms.get_context("mode") == mode


def test_a_training_step_is_compiled_too():
    result = run_in_graph_mode(Good(), (X,), optimizer=None)
    assert not result.training_checked and result.failure is None
    net = Good()
    result = run_in_graph_mode(
        net, (X,), optimizer=nn.SGD(net.trainable_params(), 0.1), loss_fn=nn.CrossEntropyLoss(), label=Y
    )
    assert result.training_checked and result.failure is None and result.compared == 1


def test_dumps_go_to_a_temporary_folder_that_is_removed():
    with redirected_dumps() as folder:
        assert os.environ["MS_OM_PATH"] == folder and os.path.isdir(folder)
    assert not os.path.exists(folder) and "MS_OM_PATH" not in os.environ


def test_without_graph_mode_the_checks_say_what_to_pass():
    report = graphaudit.audit(Good(), inputs=X)
    reason = {n.check_id: n for n in report.not_run}["GA712"]
    assert "graph_mode=True" in reason.python and "--graph-mode" in reason.cli


def test_graph_mode_training_after_the_audit_matches_a_twin():
    before = ms.get_context("mode")
    try:
        nets = []
        for _ in range(2):
            ms.set_seed(3)
            net = Good().set_train(True)
            optimizer = nn.Momentum(net.trainable_params(), 0.1, 0.9)
            nets.append(
                (net, optimizer, nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), optimizer))
            )
        (audited, audited_opt, audited_step), (twin, twin_opt, twin_step) = nets
        ms.set_context(mode=ms.GRAPH_MODE)
        ms.set_seed(9)
        audited_step(X, Y)
        graphaudit.audit(audited_step, inputs=(X, Y), graph_mode=True)
        assert ms.get_context("mode") == ms.GRAPH_MODE
        audited_step(X, Y)
        ms.set_seed(9)
        twin_step(X, Y)
        twin_step(X, Y)
        for a, b in [(audited, twin), (audited_opt, twin_opt)]:
            for pa, pb in zip(a.get_parameters(), b.get_parameters()):
                assert pa.asnumpy().tobytes() == pb.asnumpy().tobytes(), pa.name
    finally:
        ms.set_context(mode=before)


def test_a_loss_scale_cell_is_not_a_compile_failure_on_cpu():
    """TrainOneStepWithLossScaleCell's overflow check is an NPU kernel: on CPU a plain step stands in."""
    net = nn.Dense(4, 3)
    optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)
    update = nn.DynamicLossScaleUpdateCell(1024.0, 2, 1000)
    step = nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), optimizer, update)
    report = graphaudit.audit(step, inputs=(X, Y), graph_mode=True)
    assert "GA712" in report.checks_run and not report.by_check("GA712")
