"""GA5xx (train/eval mode), GA6xx (initialisation) and GA7xx (API misuse): edge cases and mindcv."""

from __future__ import annotations

import copy

import mindspore as ms
import numpy as np
import pytest
from mindcv_models import in_mode, unmodified
from mindspore import Parameter, Tensor, nn, ops
from mindspore.common.initializer import initializer

import graphaudit
from graphaudit.checks._shared.cells import drop_probability, training_flag_set

MINE = ("GA5", "GA6", "GA7")


def findings(report: graphaudit.Report, check_id: str) -> list[tuple[str, str]]:
    return [(f.severity, f.subject) for f in report.by_check(check_id)]


def mine(report: graphaudit.Report) -> list[str]:
    return [f"{f.check_id} {f.severity} {f.subject}" for f in report.findings if f.check_id.startswith(MINE)]


class BnNet(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.SequentialCell([nn.Dense(4, 8), nn.BatchNorm1d(8), nn.ReLU()])
        self.head = nn.SequentialCell([nn.Dropout(p=0.3), nn.Dense(8, 2)])

    def construct(self, x):
        return self.head(self.backbone(x))


def optimizer_for(net: nn.Cell) -> nn.Optimizer:
    return nn.Momentum(net.trainable_params(), 0.01, 0.9)


# -- GA501 / GA502 / GA503 ------------------------------------------------------------------
def test_a_fresh_cell_starts_in_eval_mode_without_a_recorded_flag():
    net = BnNet()
    assert not net.training and not training_flag_set(net)
    net.set_train(True)
    assert training_flag_set(net.backbone[1]) and net.backbone[1].training


def test_never_set_train_is_only_info_since_model_train_sets_it():
    net = BnNet()
    report = graphaudit.audit(net, optimizer_for(net))
    assert findings(report, "GA501") == [("info", "(root)")]
    assert not training_flag_set(net), "the audit must not record a training flag"


class SwitchedAtConstruction(BnNet):
    """mindcv's RepMLP: a few BatchNorms get set_train() in __init__, the network never does."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.BatchNorm1d(2).set_train()

    def construct(self, x):
        return self.norm(super().construct(x))


def test_cells_switched_on_at_construction_are_not_a_mode_mix_before_set_train():
    net = SwitchedAtConstruction()
    report = graphaudit.audit(net, optimizer_for(net))
    assert findings(report, "GA501") == [("info", "(root)")]  # set_train(True) will switch them all
    assert not report.by_check("GA502")
    report = graphaudit.audit(net, mode="eval")  # at inference the switched cell does run in training mode
    assert findings(report, "GA501") == [("error", "norm")]
    net.set_train(True)
    net.backbone.set_train(False)  # now the network was set up, and a branch was switched off
    report = graphaudit.audit(net, optimizer_for(net))
    # GA501 reports its BatchNorm: GA502's finding about the same cause joins it
    assert findings(report, "GA502") == [("error", "backbone.1")] and report.about(
        "backbone"
    ) == report.by_check("GA502")


def test_whole_network_in_eval_mode_audited_for_training_is_one_error():
    net = BnNet().set_train(False)
    report = graphaudit.audit(net, optimizer_for(net), mode="train")
    assert findings(report, "GA501") == [("error", "(root)")]
    assert not report.by_check("GA502")


def test_dropout_left_in_training_mode_for_inference():
    net = BnNet().set_train(False)
    net.head[0].set_train(True)
    report = graphaudit.audit(net, mode="eval")
    assert findings(report, "GA501") == [("error", "head.0")]
    assert report.by_check("GA502") == report.by_check("GA501")  # one cause: GA502's finding joins GA501's


def test_audit_for_the_mode_the_network_is_in_is_silent():
    for mode, flag in (("train", True), ("eval", False)):
        net = BnNet().set_train(flag)
        report = graphaudit.audit(net, optimizer_for(net) if flag else None, mode=mode)
        assert not mine(report), mine(report)


def test_frozen_batchnorm_in_eval_mode_during_training_is_not_a_ga501_error():
    net = BnNet().set_train(True)
    net.backbone.set_train(False)
    for p in net.backbone[1].get_parameters():
        p.requires_grad = False
    report = graphaudit.audit(net, optimizer_for(net))
    assert not report.by_check("GA501")
    assert findings(report, "GA502") == [("warning", "backbone")]  # still worth seeing


def test_only_the_topmost_differing_cell_is_reported():
    net = nn.SequentialCell([BnNet(), BnNet()]).set_train(True)
    net[1].set_train(False)
    report = graphaudit.audit(net, mode="train")
    assert {f.check_id for f in report.by_check("GA502")} == {"GA501"}  # its BatchNorm and Dropout: GA501's
    assert all(f.concerns("1") for f in report.by_check("GA502"))


def test_training_assigned_directly_on_the_root_is_reported_once():
    net = BnNet()
    net.training = True  # PyTorch habit: does not propagate
    assert not net.backbone.training
    report = graphaudit.audit(net, optimizer_for(net))
    # its BatchNorm and Dropout all run in eval mode: the network is in the wrong mode (GA501),
    # not split between two modes (GA502); the root's own flag changes nothing
    assert findings(report, "GA501") == [("error", "(root)")] and not report.by_check("GA502")
    assert "assigned directly" in report.by_check("GA501")[0].message


class ReturnLoss(nn.Cell):
    """A zoo trainer's thin wrapper, built after model.set_train(True): its own flag is False."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def construct(self, x):
        return self.model(x).sum()


@pytest.mark.parametrize(
    "wrap",
    [ReturnLoss, lambda model: nn.SequentialCell([model, nn.Sigmoid()])],
    ids=["return-loss", "sequential"],
)
def test_wrappers_built_after_set_train_are_not_a_mode_mix(wrap):
    model = BnNet().set_train(True)
    wrapper = wrap(model)
    assert not wrapper.training and model.training
    report = graphaudit.audit(wrapper, optimizer_for(wrapper))
    assert not report.by_check("GA502") and not report.by_check("GA501"), str(report)


def test_use_batch_statistics_false_only_matters_in_training():
    net = nn.SequentialCell([nn.Dense(4, 8), nn.BatchNorm1d(8, use_batch_statistics=False)])
    assert findings(graphaudit.audit(net.set_train(True), mode="train"), "GA503") == [("error", "1")]
    assert not graphaudit.audit(net.set_train(False), mode="eval").by_check("GA503")
    assert not graphaudit.audit(net).by_check("GA503")


# -- GA601 / GA602 / GA603 ------------------------------------------------------------------
class Tokens(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.cls_token = Parameter(initializer("zeros", (1, 1, 8), ms.float32), name="cls_token")
        self.position_embedding = nn.Embedding(6, 8, embedding_table="zeros")
        self.layer_scale = Parameter(initializer("zeros", (8,), ms.float32), name="layer_scale")
        self.proj = nn.Dense(8, 8, bias_init="zeros")
        self.fixed = Parameter(initializer("ones", (8, 8), ms.float32), name="fixed", requires_grad=False)

    def construct(self, x):
        return self.proj(x) * self.layer_scale + self.cls_token


def test_legitimate_zeros_and_constants_are_never_reported():
    report = graphaudit.audit(Tokens(), mode="train")
    for check_id in ("GA601", "GA602", "GA603"):
        assert not report.by_check(check_id), report.by_check(check_id)


def test_zero_and_constant_weights_are_not_also_reported_as_identical_copies():
    net = nn.SequentialCell([nn.Dense(8, 8, weight_init="zeros"), nn.Dense(8, 8, weight_init="zeros")])
    report = graphaudit.audit(net)
    assert findings(report, "GA601") == [("error", "(root)")]  # one weight_init="zeros", one finding
    assert report.by_check("GA601")[0].subjects == ("0.weight", "1.weight")
    assert not report.by_check("GA603")


def test_one_init_tensor_wrapped_twice_and_declared_tied_groups():
    init = Tensor(np.random.default_rng(0).normal(size=(8, 8)).astype(np.float32))

    class Twice(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.a = nn.Dense(8, 8, weight_init=init)
            self.b = nn.Dense(8, 8, weight_init=init)

        def construct(self, x):
            return self.b(self.a(x))

    assert findings(graphaudit.audit(Twice()), "GA603") == [("warning", "b.weight")]
    tied = graphaudit.Spec(shared_parameters=[["a.weight", "b.weight"]])
    assert not graphaudit.audit(Twice(), spec=tied).by_check("GA603")


def test_reading_values_changes_nothing():
    layer = nn.Dense(8, 8)
    net = nn.CellList([copy.deepcopy(layer) for _ in range(2)])
    before = [p.asnumpy().copy() for p in net.get_parameters()]
    report = graphaudit.audit(net)
    assert report.by_check("GA603")
    assert all(np.array_equal(b, p.asnumpy()) for b, p in zip(before, net.get_parameters()))


# -- GA701 / GA702 ---------------------------------------------------------------------------
def test_dropout_rate_is_read_where_mindspore_keeps_it():
    assert drop_probability(nn.Dropout(p=0.9)) == pytest.approx(0.9)
    assert drop_probability(nn.Dropout(0.9)) == pytest.approx(0.1)  # keep_prob
    late = nn.Dropout(p=0.8)
    late.p = 0.1  # too late: the primitive keeps 0.8
    assert drop_probability(late) == pytest.approx(0.8)
    assert drop_probability(nn.Dropout(p=0.3, keep_prob=1.0)) == 0.0
    assert drop_probability(nn.Dropout2d(p=0.7)) == pytest.approx(0.7)
    assert drop_probability(nn.Dropout1d(p=0.6)) == pytest.approx(0.6)
    assert drop_probability(ms.mint.nn.Dropout(p=0.6)) == pytest.approx(0.6)


def test_dropout_rates_and_keep_prob():
    net = nn.SequentialCell(
        [
            nn.Dropout(p=0.7),
            nn.Dropout(p=0.5),
            nn.Dropout(),
            nn.Dropout(p=0.3, keep_prob=1.0),
            nn.Dropout2d(p=0.9),
        ]
    )
    report = graphaudit.audit(net)
    assert findings(report, "GA701") == [("warning", "0"), ("warning", "4")]
    assert sorted(findings(report, "GA702")) == [("info", "2"), ("warning", "3")]


def test_a_keep_prob_written_as_a_drop_rate_gets_fixes_that_agree():
    net = nn.SequentialCell([nn.Dense(4, 4), nn.Dropout(keep_prob=0.1), nn.Dense(4, 2)])
    report = graphaudit.audit(net)
    (rate,), (deprecated,) = report.by_check("GA701"), report.by_check("GA702")
    # both offer the same two readings: p=0.1 if 10% was meant, p=0.9 to keep what it does now
    for finding in (rate, deprecated):
        assert "nn.Dropout(p=0.1)" in finding.fix and "nn.Dropout(p=0.9)" in finding.fix, finding.fix
    assert "ignore this warning" not in rate.fix  # keep_prob is deprecated: keeping it is no fix


# -- GA703 -----------------------------------------------------------------------------------
class Divisions(nn.Cell):
    def __init__(self, kind: str) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 4)
        self.kind = kind

    def construct(self, x):
        h = self.fc(x)
        s = h.sum(axis=-1, keepdims=True)
        if self.kind == "scalar":
            return h / 8.0 + h / Tensor(2.0) + ops.div(h, 3)
        if self.kind == "guarded":
            return h / (s + 1e-6) + h / ops.clamp(s, min=1e-6) + h / ops.exp(h).sum(axis=-1, keepdims=True)
        if self.kind == "reflected":
            return 1.0 / s
        return ops.div(h, s.sqrt())


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("scalar", []),
        ("guarded", []),
        ("reflected", [("warning", "(root)")]),
        ("plain", [("warning", "(root)")]),
    ],
)
def test_division_divisors(kind, expected):
    report = graphaudit.audit(Divisions(kind), inputs=Tensor(np.ones((2, 4), np.float32)))
    assert findings(report, "GA703") == expected


def test_division_check_needs_a_traced_pass():
    report = graphaudit.audit(Divisions("plain"))
    assert "GA703" in report.skipped


# -- GA704 -----------------------------------------------------------------------------------
def test_misspelt_training_flag_on_the_root():
    net = BnNet()
    net.trainning = True
    report = graphaudit.audit(net)
    assert findings(report, "GA704") == [("warning", "(root)")]
    assert not net.training


def test_real_and_read_attributes_are_not_misspellings():
    class Gate(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Dense(4, 4)
            self.is_training = False
            self.use_batch_stats = True  # read by construct: this cell's own switch

        def construct(self, x):
            return self.fc(x) if self.is_training or self.use_batch_stats else x

    net = nn.SequentialCell([Gate(), nn.BatchNorm1d(4)])
    assert not graphaudit.audit(net).by_check("GA704")


# -- unmodified mindcv models ----------------------------------------------------------------
MODELS = [("resnet18", 64), ("mobilenet_v3_small_100", 64), ("densenet121", 64), ("efficientnet_b0", 64),
          ("vit_b_32_224", 224)]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(("name", "size"), MODELS, ids=[m[0] for m in MODELS])
def test_mindcv_models_are_silent_in_both_modes(name, size):
    net = unmodified(name)
    x = Tensor(np.random.default_rng(0).random((2, 3, size, size), dtype=np.float32))
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9, weight_decay=1e-4)
    with in_mode(net, training=True):
        train = graphaudit.audit(net, optimizer, inputs=x, loss_fn=nn.CrossEntropyLoss(), mode="train")
        assert not mine(train), mine(train)
        assert all(c.training for _, c in net.cells_and_names())
    with in_mode(net, training=False):
        evaluation = graphaudit.audit(net, inputs=x, mode="eval")
        assert not mine(evaluation), mine(evaluation)
        assert not any(c.training for _, c in net.cells_and_names())
    ran = set(train.checks_run) & set(evaluation.checks_run)
    assert {"GA501", "GA502", "GA503", "GA601", "GA602", "GA603", "GA701", "GA702", "GA703", "GA704"} <= ran


def test_identity_initialised_copies_are_a_deliberate_start_not_a_copy_bug():
    """ConViT starts every value projection at the identity; a deepcopy of a random layer is a bug."""
    from mindspore.common.initializer import Identity, Normal

    class Layers(nn.Cell):
        def __init__(self, init):
            super().__init__()
            self.layers = nn.CellList([nn.Dense(8, 8, weight_init=init, has_bias=False) for _ in range(3)])

        def construct(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    identity = Layers(Identity())
    assert not graphaudit.audit(identity).by_check("GA603")
    random_copies = Layers(Normal(0.02))
    for layer in random_copies.layers[1:]:
        layer.weight.set_data(random_copies.layers[0].weight.value().copy())
    (finding,) = graphaudit.audit(random_copies).by_check("GA603")
    assert finding.subject == "layers.1.weight"  # the attribute path, what a user greps for
    assert finding.subjects == ("layers.0.weight", "layers.1.weight", "layers.2.weight")


@pytest.mark.slow
def test_convit_identity_value_projections_are_not_reported():
    mindcv = pytest.importorskip("mindcv")
    net = mindcv.create_model("convit_tiny", pretrained=False)
    assert not graphaudit.audit(net, nn.Momentum(net.trainable_params(), 0.01, 0.9)).by_check("GA603")


class AuxHead(nn.Cell):
    """An auxiliary head called in training only, under one of several guards (Inception-v3's is an ``and``)."""

    def __init__(self) -> None:
        super().__init__()
        self.use_aux = True
        self.body = nn.Dense(4, 4)
        self.head = nn.Dense(4, 2)
        self.aux = nn.Dense(4, 2)


class PlainGuard(AuxHead):
    def construct(self, x):
        h = ops.relu(self.body(x))
        if self.training:
            return self.head(h) + self.aux(h)
        return self.head(h)


class AndGuard(AuxHead):
    def construct(self, x):
        h = ops.relu(self.body(x))
        if self.training and self.use_aux:
            return self.head(h) + self.aux(h)
        return self.head(h)


class OrGuard(AuxHead):
    def construct(self, x):
        h = ops.relu(self.body(x))
        if not self.training or not self.use_aux:
            return self.head(h)
        else:
            return self.head(h) + self.aux(h)


class OtherGuard(AuxHead):
    def construct(self, x):
        h = ops.relu(self.body(x))
        if self.use_aux and x.shape[0] > 1:
            return self.head(h) + self.aux(h)
        return self.head(h)


@pytest.mark.parametrize(
    ("net", "severity"),
    [(PlainGuard, "info"), (AndGuard, "info"), (OrGuard, "info"), (OtherGuard, "warning")],
)
def test_a_cell_called_only_in_training_is_info_when_the_pass_ran_in_eval(net, severity):
    report = graphaudit.audit(net(), inputs=Tensor(np.ones((1, 4), np.float32)), mode="eval")
    assert findings(report, "GA301") == [(severity, "aux")]
