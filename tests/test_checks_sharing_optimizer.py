"""Targeted tests for the weight-sharing (GA1xx) and optimizer/freezing (GA2xx) checks."""

from __future__ import annotations

import numpy as np
from mindspore import Parameter, Tensor, nn
from nets import Containers, Residual, Tied, tensor

import graphaudit
from graphaudit import Spec
from graphaudit.capture.training.optimizer import OptimizerEntry
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.optimizer import OptimizerView


def found(report: graphaudit.Report, check_id: str) -> list[tuple[str, str]]:
    return [(f.severity, f.subject) for f in report.by_check(check_id)]


class Outer(nn.Cell):
    """One block (with a Dense inside) held under two attribute names, outside any container."""

    def __init__(self) -> None:
        super().__init__()
        self.enc = nn.SequentialCell([nn.Dense(4, 4), nn.ReLU()])
        self.dec = self.enc

    def construct(self, x):
        return self.dec(self.enc(x))


# -- GA102 / GA103 / GA104 ---------------------------------------------------------------


def test_inventory_names_every_path_of_a_tie():
    report = graphaudit.audit(Tied())
    (finding,) = report.by_check("GA102")
    assert finding.severity == "info"
    assert "embed.embedding_table" in finding.message and "decoder.weight" in finding.message


def test_declared_name_matching_nothing_lists_close_matches():
    spec = Spec(shared_parameters=[["embed.embedding_table", "decoder.weights"]])
    report = graphaudit.audit(Tied(), spec=spec)
    (finding,) = report.by_check("GA300")  # a name that names nothing: GA300, not GA103
    assert finding.subject == "decoder.weights"
    assert "decoder.weight" in finding.message


def test_declared_shared_cells_that_are_distinct_objects():
    spec = Spec(shared_cells=[["blocks.0", "blocks.1"]])
    report = graphaudit.audit(Containers(), spec=spec)
    assert found(report, "GA103") == [("error", "blocks.1")]


def test_declared_shared_cells_glob_keeps_the_outermost_cells():
    spec = Spec(shared_cells=[["enc", "de*"]])
    report = graphaudit.audit(Outer(), spec=spec)
    assert found(report, "GA103") == []
    assert found(report, "GA104") == []


def test_undeclared_sharing_is_silent_without_a_spec():
    assert found(graphaudit.audit(Tied()), "GA104") == []
    assert found(graphaudit.audit(Outer()), "GA104") == []


def test_undeclared_shared_cell_reports_the_outer_cell_only():
    report = graphaudit.audit(Outer(), spec=Spec(frozen=["nothing"]))
    assert found(report, "GA104") == [("warning", "enc")]


def test_undeclared_sharing_leaves_container_repeats_to_ga101():
    block = nn.Dense(4, 4)
    report = graphaudit.audit(nn.SequentialCell([block, block]), spec=Spec(frozen=["nothing"]))
    assert found(report, "GA101") and not found(report, "GA104")


# -- GA105 ------------------------------------------------------------------------------


def test_duplicate_name_by_assigning_parameter_name():
    net = nn.SequentialCell([nn.Dense(2, 2), nn.Dense(2, 2)])
    net[1].weight.name = "0.weight"
    assert found(graphaudit.audit(net), "GA105") == [("error", "0.weight")]


# -- GA202 / GA203 ----------------------------------------------------------------------


def test_optimizer_parameter_unknown_to_the_network_points_at_the_root():
    net = nn.Dense(2, 2)
    stray = Parameter(Tensor(np.ones((2,), np.float32)), name="stray")
    report = graphaudit.audit(net, nn.SGD([*net.trainable_params(), stray]))
    (finding,) = report.by_check("GA202")
    assert finding.subject == "stray" and finding.nodes == ("cell:",)


def test_frozen_in_optimizer_without_decay_is_a_warning_and_a_schedule_an_error():
    net = nn.Dense(2, 2)
    net.weight.requires_grad = False
    report = graphaudit.audit(net, nn.SGD(net.get_parameters()))
    assert found(report, "GA203") == [("warning", "weight")]

    ctx = AuditContext.build(net, nn.SGD(net.get_parameters()))
    scheduled = tuple(OptimizerEntry(p, float("nan")) for p in ctx.optimizer_parameters)
    ctx = ctx.with_evidence(OptimizerView(ctx.optimizer, scheduled))
    from graphaudit.checks import all_checks

    assert [(f.severity, f.subject) for f in all_checks()["GA203"](ctx)] == [("error", "weight")]


def test_frozen_parameter_in_optimizer_really_drifts_under_weight_decay():
    """The MindSpore behaviour GA203's message states: decay moves a requires_grad=False weight."""
    net = nn.Dense(4, 2)
    net.weight.requires_grad = False
    before = net.weight.asnumpy().copy()
    optimizer = nn.SGD(net.get_parameters(), learning_rate=0.1, weight_decay=0.1)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), optimizer)
    step(tensor(3, 4), Tensor(np.zeros((3, 2), np.float32)))
    np.testing.assert_allclose(net.weight.asnumpy(), before * 0.99, rtol=1e-5)


# -- GA204 ------------------------------------------------------------------------------


def test_misspelt_freeze_attribute_is_really_ignored_by_mindspore():
    net = nn.Dense(2, 2)
    net.weight.require_grad = False
    assert net.weight.requires_grad and len(net.trainable_params()) == 2
    assert found(graphaudit.audit(net), "GA204") == [("error", "weight")]


def test_no_misspelt_attribute_on_ordinary_networks():
    for net in (Residual(), Containers(), Tied(), nn.BatchNorm2d(3), nn.LayerNorm((4,))):
        assert found(graphaudit.audit(net, nn.SGD(net.trainable_params())), "GA204") == []


def test_other_near_misses():
    net = nn.Dense(2, 2)
    net.weight.trainable = False
    net.bias.requires_grads = False
    assert sorted(found(graphaudit.audit(net), "GA204")) == [("error", "bias"), ("error", "weight")]


# -- GA205 / GA206 ----------------------------------------------------------------------


def test_declared_frozen_left_out_of_the_optimizer_is_ga201_info_only():
    net = nn.SequentialCell([nn.Dense(2, 2), nn.Dense(2, 2)])
    report = graphaudit.audit(net, nn.SGD(net[1].trainable_params()), spec=Spec(frozen=["0.*"]))
    assert found(report, "GA205") == []
    assert {s for s, _ in found(report, "GA201")} == {"info"}


def test_declared_trainable_without_optimizer_checks_requires_grad_only():
    net = nn.Dense(2, 2)
    net.bias.requires_grad = False
    assert found(graphaudit.audit(net, spec=Spec(trainable=["*"])), "GA206") == [("error", "bias")]


# -- read only --------------------------------------------------------------------------


def test_checks_change_nothing():
    net = Tied()
    net.embed.embedding_table.require_grad = False
    optimizer = nn.Momentum(net.get_parameters(), 0.01, 0.9, weight_decay=1e-4)
    spec = Spec(frozen=["embed.*"], trainable=["x*"], shared_parameters=[["embed.*", "decoder.*"]])

    def state():
        return [
            (p.name, p.requires_grad, sorted(vars(p)), p.asnumpy().tobytes())
            for p in (*net.get_parameters(), *optimizer.parameters)
        ]

    before = state()
    graphaudit.audit(net, optimizer, spec=spec)
    assert state() == before
    assert spec == Spec(frozen=["embed.*"], trainable=["x*"], shared_parameters=[["embed.*", "decoder.*"]])


def test_declared_trainable_glob_does_not_cover_batchnorm_statistics():
    net = Residual()
    report = graphaudit.audit(net, nn.SGD(net.trainable_params()), spec=Spec(trainable=["*"]))
    assert found(report, "GA206") == []
    exact = Spec(trainable=["bn.moving_mean"])
    assert found(graphaudit.audit(net, spec=exact), "GA206") == [("error", "bn.moving_mean")]
