"""The design rules of the research linters (issue 16): GA050-GA054, GA405-GA409, GA308-GA314, GA720-GA721.

Each rule's bad and good samples are run by ``tests/test_samples.py``; this file covers the
edges: what each rule must stay silent on (the correct designs that look like the bug), the
severities it picks, and the ``Spec.linear_connections`` declaration.
"""

from __future__ import annotations

import numpy as np
import pytest
from mindspore import Tensor, nn, ops

import graphaudit
from graphaudit.spec import Spec

RNG = np.random.default_rng(0)
RULES = ("GA05", "GA40", "GA41", "GA30", "GA31", "GA72")


def features(rows: int = 16, width: int = 20) -> Tensor:
    return Tensor(RNG.standard_normal((rows, width)).astype(np.float32))


def indices(rows: int = 16, classes: int = 10) -> Tensor:
    return Tensor(RNG.integers(0, classes, rows).astype(np.int32))


def one_hot(rows: int = 16, classes: int = 10) -> Tensor:
    return Tensor(np.eye(classes, dtype=np.float32)[RNG.integers(0, classes, rows)])


def mlp(out: int = 10, *tail: nn.Cell, width: int = 20) -> nn.SequentialCell:
    return nn.SequentialCell([nn.Dense(width, 32), nn.ReLU(), nn.Dense(32, out), *tail])


def findings(
    net, *, inputs, label=None, loss_fn=None, optimizer=None, **kwargs
) -> list[tuple[str, str, str]]:
    """``(check_id, severity, subject)`` of the design rules' findings (those they confirmed included)."""
    if optimizer is None:
        optimizer = nn.Adam(net.trainable_params(), 1e-3)
    report = graphaudit.audit(net, optimizer, inputs=inputs, label=label, loss_fn=loss_fn, **kwargs)
    return [(f.check_id, f.severity, f.subject) for f in report.findings if f.check_id.startswith(RULES)]


def ids(found: list[tuple[str, str, str]]) -> set[str]:
    return {check_id for check_id, _, _ in found}


# -- GA050-GA054: the inputs and labels given to audit() -------------------------------------------
class Rescaling(nn.Cell):
    """A network that scales its own raw pixels first: not GA050's."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.head = nn.Dense(8 * 8 * 8, 10)

    def construct(self, x):
        x = ops.relu(self.conv(x / 255.0))
        return self.head(x.reshape(x.shape[0], -1))


def test_ga050_judges_only_values_a_weight_layer_multiplies_as_they_are():
    raw = Tensor(RNG.integers(0, 256, (4, 3, 8, 8)).astype(np.float32))
    assert ids(findings(Rescaling(), inputs=(raw,))) == set()
    apart = np.column_stack([RNG.standard_normal(32), RNG.standard_normal(32) * 1000]).astype(np.float32)
    found = findings(nn.SequentialCell([nn.Dense(2, 4), nn.ReLU(), nn.Dense(4, 2)]), inputs=(Tensor(apart),))
    assert ("GA050", "warning", "inputs[0]") in found


def test_ga050_needs_enough_values_to_judge_a_spread_and_skips_token_ids():
    two_rows = Tensor(np.array([[0.0, 5.0, 1.0], [0.001, 9.0, 2.0]], np.float32))
    assert "GA050" not in ids(findings(nn.SequentialCell([nn.Dense(3, 2)]), inputs=(two_rows,)))
    tokens = Tensor(RNG.integers(0, 200, (4, 6)).astype(np.int32))
    embed = nn.SequentialCell([nn.Embedding(200, 8), nn.Flatten(), nn.Dense(48, 2)])
    assert "GA050" not in ids(findings(embed, inputs=(tokens,)))


def test_ga051_severity_follows_the_batch_size_and_the_classes():
    assert ("GA051", "info", "label") in findings(
        mlp(), inputs=(features(8),), label=Tensor(np.full(8, 4, np.int32)), loss_fn=nn.CrossEntropyLoss()
    )
    binary = Tensor(np.zeros((32, 1), np.float32))  # an imbalanced binary task gives such batches honestly
    assert ("GA051", "info", "label") in findings(
        mlp(1), inputs=(features(32),), label=binary, loss_fn=nn.BCEWithLogitsLoss()
    )
    ignored = np.full(24, 2, np.int32)
    ignored[:5] = -100  # ignore_index: not a class; 19 labels remain
    assert ("GA051", "warning", "label") in findings(
        mlp(), inputs=(features(24),), label=Tensor(ignored), loss_fn=nn.CrossEntropyLoss()
    )
    ignored[:10] = -100  # 14 labels remain: fewer than 16
    assert ("GA051", "info", "label") in findings(
        mlp(), inputs=(features(24),), label=Tensor(ignored), loss_fn=nn.CrossEntropyLoss()
    )
    assert "GA051" not in ids(
        findings(
            mlp(), inputs=(features(3),), label=Tensor(np.zeros(3, np.int32)), loss_fn=nn.CrossEntropyLoss()
        )
    )


def test_ga052_negative_labels_are_reported_and_ignore_index_is_not():
    labels = RNG.integers(0, 10, 16).astype(np.int32)
    labels[0] = -1  # taken from the end by the gather: silently class 9
    assert ("GA052", "error", "label") in findings(
        mlp(), inputs=(features(),), label=Tensor(labels), loss_fn=nn.CrossEntropyLoss()
    )
    labels[0] = -100
    assert "GA052" not in ids(
        findings(mlp(), inputs=(features(),), label=Tensor(labels), loss_fn=nn.CrossEntropyLoss())
    )


def test_ga052_regression_targets_outside_the_output_activation_range():
    targets = Tensor((RNG.random((16, 1)) * 3 - 1.5).astype(np.float32))
    assert ("GA052", "warning", "label") in findings(
        mlp(1, nn.Tanh()), inputs=(features(),), label=targets, loss_fn=nn.MSELoss()
    )
    inside = Tensor((RNG.random((16, 1)) * 1.8 - 0.9).astype(np.float32))
    assert "GA052" not in ids(
        findings(mlp(1, nn.Tanh()), inputs=(features(),), label=inside, loss_fn=nn.MSELoss())
    )
    negative = Tensor(-RNG.random((16, 1)).astype(np.float32))
    assert "GA052" not in ids(findings(mlp(1), inputs=(features(),), label=negative, loss_fn=nn.MSELoss()))


def test_ga052_bce_targets_outside_zero_one():
    signs = Tensor(RNG.choice([-1.0, 1.0], (16, 1)).astype(np.float32))
    assert ("GA052", "error", "label") in findings(
        mlp(1), inputs=(features(),), label=signs, loss_fn=nn.BCEWithLogitsLoss()
    )


def test_ga054_is_silent_when_the_shapes_agree_or_cannot_broadcast():
    assert "GA054" not in ids(
        findings(
            mlp(1), inputs=(features(),), label=Tensor(np.zeros((16, 1), np.float32)), loss_fn=nn.MSELoss()
        )
    )
    # a (16, 3) output against (16,) targets does not broadcast: the loss raises on its own
    assert "GA054" not in ids(
        findings(mlp(3), inputs=(features(),), label=Tensor(np.zeros(16, np.float32)), loss_fn=nn.MSELoss())
    )


def test_label_rules_say_they_need_a_label():
    net = mlp()
    report = graphaudit.audit(
        net, nn.Adam(net.trainable_params(), 1e-3), inputs=(features(),), loss_fn=nn.CrossEntropyLoss()
    )
    for check_id in ("GA051", "GA052", "GA053", "GA054", "GA405", "GA409"):
        assert check_id in report.skipped, check_id
    assert "label=y" in str(report)


# -- GA405-GA409: loss, last activation and labels agree --------------------------------------------
def test_ga405_class_indices_to_bce_are_an_error_and_few_one_hot_rows_info():
    assert ("GA405", "error", "BCEWithLogitsLoss") in findings(
        mlp(1),
        inputs=(features(),),
        label=Tensor(RNG.integers(0, 4, (16, 1)).astype(np.float32)),
        loss_fn=nn.BCEWithLogitsLoss(),
    )
    assert ("GA405", "info", "BCEWithLogitsLoss") in findings(
        mlp(), inputs=(features(4),), label=one_hot(4), loss_fn=nn.BCEWithLogitsLoss()
    )
    multi = Tensor((RNG.random((16, 10)) < 0.3).astype(np.float32))
    assert "GA405" not in ids(
        findings(mlp(), inputs=(features(),), label=multi, loss_fn=nn.BCEWithLogitsLoss())
    )


class SigmoidFocal(nn.Cell):
    """A custom BCE that one-hots its class indices itself (RetinaNet's sigmoid focal loss, simplified)."""

    def construct(self, logits, labels):
        target = ops.one_hot(labels, logits.shape[-1], Tensor(1.0), Tensor(0.0))
        weight = ops.ones_like(logits)
        return ops.binary_cross_entropy_with_logits(logits, target, weight, weight)


class FlatMSE(nn.Cell):
    """A custom regression loss that flattens both arguments: no broadcast."""

    def construct(self, output, target):
        return ops.mse_loss(output.reshape(-1), target.reshape(-1))


def test_custom_losses_that_convert_or_reshape_the_label_are_not_judged():
    found = findings(mlp(), inputs=(features(),), label=indices(), loss_fn=SigmoidFocal())
    assert not ids(found) & {"GA405", "GA052"}
    found = findings(mlp(1), inputs=(features(),), label=Tensor(np.zeros(16, np.float32)), loss_fn=FlatMSE())
    assert "GA054" not in ids(found)


def test_ga406_softmax_before_bce_with_logits_and_not_ga405_twice():
    found = findings(
        mlp(10, nn.Softmax()), inputs=(features(),), label=one_hot(), loss_fn=nn.BCEWithLogitsLoss()
    )
    assert ("GA406", "error", "BCEWithLogitsLoss") in found
    assert "GA405" not in ids(found)


@pytest.mark.parametrize(
    ("tail", "loss", "expected"),
    [
        (nn.ReLU(), nn.CrossEntropyLoss(), "warning"),
        (nn.Sigmoid(), nn.CrossEntropyLoss(), "error"),
        (nn.Tanh(), nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"), "error"),
    ],
)
def test_ga407_bounded_activation_before_a_softmax_cross_entropy(tail, loss, expected):
    found = findings(mlp(10, tail), inputs=(features(),), label=indices(), loss_fn=loss)
    assert ("GA407", expected, type(loss).__name__) in found


def test_ga407_relu_before_bce_with_logits_is_an_error_and_sigmoid_is_ga401s():
    binary = Tensor(RNG.integers(0, 2, (16, 1)).astype(np.float32))
    assert ("GA407", "error", "BCEWithLogitsLoss") in findings(
        mlp(1, nn.ReLU()), inputs=(features(),), label=binary, loss_fn=nn.BCEWithLogitsLoss()
    )
    net = mlp(1, nn.Sigmoid())
    report = graphaudit.audit(
        net,
        nn.Adam(net.trainable_params(), 1e-3),
        inputs=(features(),),
        label=binary,
        loss_fn=nn.BCEWithLogitsLoss(),
    )
    assert report.by_check("GA401") and not report.by_check("GA407")


def test_ga408_last_axis_for_softmax_cross_entropy_with_logits():
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    assert ("GA408", "error", "SoftmaxCrossEntropyWithLogits") in findings(
        mlp(1), inputs=(features(),), loss_fn=loss
    )
    assert "GA408" not in ids(findings(mlp(2), inputs=(features(),), loss_fn=loss))


def test_ga409_leaves_probability_targets_alone():
    smoothed = np.full((16, 10), 0.01, np.float32)
    smoothed[np.arange(16), RNG.integers(0, 10, 16)] = 0.91
    assert "GA409" not in ids(
        findings(mlp(), inputs=(features(),), label=Tensor(smoothed), loss_fn=nn.MSELoss())
    )


# -- GA308: linear stacks ---------------------------------------------------------------------------
class ConvThenDense(nn.Cell):
    def __init__(self, groups: int = 1) -> None:
        super().__init__()
        self.depthwise = nn.Conv2d(8, 8, 3, group=groups)
        self.pointwise = nn.Conv2d(8, 16, 1)
        self.relu = nn.ReLU()
        self.drop = nn.Dropout(p=0.1)
        self.head = nn.Dense(16 * 8 * 8, 10)  # pad_mode='same' by default

    def construct(self, x):
        x = self.relu(self.pointwise(self.depthwise(x)))
        x = self.head(self.drop(ops.flatten(x)))
        return x


def test_ga308_separable_convolutions_are_a_factorisation():
    x = Tensor(RNG.standard_normal((2, 8, 8, 8)).astype(np.float32))
    assert ("GA308", "warning", "pointwise") in findings(ConvThenDense(groups=1), inputs=(x,))
    assert "GA308" not in ids(findings(ConvThenDense(groups=8), inputs=(x,)))


def test_ga308_through_dropout_and_flatten_and_a_declared_pair():
    layers = [
        nn.Dense(20, 32),
        nn.Dropout(p=0.2),
        nn.Flatten(),
        nn.Dense(32, 16),
        nn.ReLU(),
        nn.Dense(16, 10),
    ]
    net = nn.SequentialCell(layers)
    assert ("GA308", "warning", "3") in findings(net, inputs=(features(),))
    declared = Spec(linear_connections=[("0", "3")])
    assert "GA308" not in ids(findings(net, inputs=(features(),), spec=declared))
    assert "GA308" not in ids(findings(mlp(), inputs=(features(),)))


def test_ga308_is_info_in_a_network_without_any_activation():
    linear = nn.SequentialCell([nn.Dense(20, 8), nn.Dense(8, 2)])  # a linear model written as two layers
    assert [f for f in findings(linear, inputs=(features(),)) if f[0] == "GA308"] == [("GA308", "info", "1")]


class TokenMixing(nn.Cell):
    """MLP-Mixer without activations: a Dense over tokens, a transpose, a Dense over channels."""

    def __init__(self) -> None:
        super().__init__()
        self.tokens = nn.Dense(6, 6)
        self.channels = nn.Dense(8, 8)

    def construct(self, x):  # (N, 8, 6): channels, tokens
        return self.channels(self.tokens(x).transpose(0, 2, 1))


class Aggregate(nn.Cell):
    """CoaT's head: a Conv1d weighs 3 class tokens into one, then a Dense classifies it."""

    def __init__(self) -> None:
        super().__init__()
        self.aggregate = nn.Conv1d(3, 1, 1)
        self.head = nn.Dense(16, 10)

    def construct(self, x):  # (N, 3, 16)
        return self.head(self.aggregate(x).squeeze(1))


def test_ga308_layers_mixing_different_axes_are_a_structured_factorisation():
    assert "GA308" not in ids(
        findings(TokenMixing(), inputs=(Tensor(RNG.standard_normal((2, 8, 6)).astype(np.float32)),))
    )
    tokens = Tensor(RNG.standard_normal((2, 3, 16)).astype(np.float32))
    found = findings(Aggregate(), inputs=(tokens,))
    assert not ids(found) & {"GA308", "GA314"}


def test_spec_linear_connections_round_trip_and_validation():
    spec = Spec(linear_connections=[("proj.down", "proj.up")])
    text = spec.to_toml()
    assert 'linear = [\n    ["proj.down", "proj.up"],\n]' in text
    assert Spec.from_toml(text) == spec
    assert "linear" not in Spec().to_toml()  # older files keep their bytes
    assert spec.declares_linear("proj.down", "proj.up") and not spec.declares_linear("proj.up", "proj.down")
    with pytest.raises(graphaudit.errors.SpecError, match=r"connections.linear\[0\] must be a pair"):
        Spec.from_toml('[connections]\nlinear = [["only-one"]]\n')


# -- GA309 / GA310: saturating hidden activations ----------------------------------------------------
class Residual(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(16, 16)
        self.act = nn.Tanh()

    def construct(self, x):
        return x + self.act(self.fc(x))


class Gated(nn.Cell):
    """Squeeze-and-excitation style: the sigmoid gates, it does not feed the next layer."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(16, 16)
        self.gate = nn.Dense(16, 16)

    def construct(self, x):
        return self.fc(x) * ops.sigmoid(self.gate(x))


def test_ga309_depth_residuals_and_gates():
    x = features(8, 16)
    shallow = nn.SequentialCell([nn.Dense(16, 16, activation="tanh") for _ in range(3)] + [nn.Dense(16, 4)])
    assert "GA309" not in ids(findings(shallow, inputs=(x,)))
    deep = nn.SequentialCell([nn.Dense(16, 16, activation="tanh") for _ in range(4)] + [nn.Dense(16, 4)])
    assert ("GA309", "warning", "0") in findings(deep, inputs=(x,))
    residual = nn.SequentialCell([Residual() for _ in range(6)] + [nn.Dense(16, 4)])
    assert "GA309" not in ids(findings(residual, inputs=(x,)))
    gated = nn.SequentialCell([Gated() for _ in range(6)] + [nn.Dense(16, 4)])
    assert "GA309" not in ids(findings(gated, inputs=(x,)))


# -- GA311-GA314: capacity and shape -------------------------------------------------------------------
def test_ga311_is_info_for_a_head_somewhat_narrower_than_the_classes_and_skips_the_input():
    head = nn.SequentialCell([nn.Dense(20, 512), nn.ReLU(), nn.Dense(512, 1000)])
    assert ("GA311", "info", "2") in findings(head, inputs=(features(),))
    direct = nn.SequentialCell([nn.Dense(4, 10)])  # 4 input features, 10 classes: no hidden layer
    assert "GA311" not in ids(findings(direct, inputs=(features(8, 4),)))


def cnn(size: int, strides: int, tail: int) -> tuple[nn.Cell, Tensor]:
    layers: list[nn.Cell] = []
    width = 3
    for _ in range(strides):
        layers += [nn.Conv2d(width, 16, 3, stride=2, pad_mode="pad", padding=1), nn.ReLU()]
        width = 16
    layers += [m for _ in range(tail) for m in (nn.Conv2d(16, 16, 3), nn.ReLU())]
    net = nn.SequentialCell([*layers, nn.Flatten(), nn.Dense(16 * (size >> strides) ** 2, 10)])
    return net, Tensor(RNG.standard_normal((2, 3, size, size)).astype(np.float32))


def test_ga312_one_or_two_layers_on_1x1_maps_are_info():
    net, x = cnn(16, 4, 2)
    found = findings(net, inputs=(x,))
    assert ("GA312", "info", "6") in found  # '6' takes the map from 2x2 to 1x1
    net, x = cnn(16, 2, 2)
    assert not ids(findings(net, inputs=(x,))) & {"GA312", "GA313"}


def test_ga313_a_kernel_slightly_larger_than_the_map_is_info():
    net, x = cnn(8, 2, 1)  # a 3x3 kernel on a 2x2 map
    assert ("GA313", "info", "4") in findings(net, inputs=(x,))


class SegmentationHead(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.SequentialCell([nn.Conv2d(3, 16, 3), nn.ReLU(), nn.Conv2d(16, 16, 3), nn.ReLU()])
        self.mask = nn.Conv2d(16, 1, 1)  # one foreground logit per pixel

    def construct(self, x):
        return self.mask(self.body(x))


def test_ga314_is_silent_on_a_one_channel_output_head():
    x = Tensor(RNG.standard_normal((2, 3, 8, 8)).astype(np.float32))
    assert "GA314" not in ids(findings(SegmentationHead(), inputs=(x,)))


# -- GA720 / GA721: batch size and learning rate ---------------------------------------------------------
def test_ga720_one_value_per_channel_is_an_error_and_eval_or_frozen_statistics_are_silent():
    net = nn.SequentialCell([nn.Dense(20, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dense(32, 10)])
    assert ("GA720", "error", "1") in findings(net, inputs=(features(1),))
    assert "GA720" not in ids(findings(net, inputs=(features(1),), optimizer=None, mode="eval"))
    frozen = nn.SequentialCell(
        [nn.Dense(20, 32), nn.BatchNorm1d(32, use_batch_statistics=False), nn.Dense(32, 10)]
    )
    assert "GA720" not in ids(findings(frozen, inputs=(features(1),)))


def test_ga721_judges_the_peak_of_a_schedule_and_knows_the_families():
    net = mlp()
    warm = nn.piecewise_constant_lr([10, 20], [0.0, 0.5])  # warms up to 0.5: Adam far too high
    assert ("GA721", "warning", "Adam") in findings(
        net, inputs=(features(),), optimizer=nn.Adam(net.trainable_params(), warm)
    )
    assert ("GA721", "info", "Adam") in findings(
        net, inputs=(features(),), optimizer=nn.Adam(net.trainable_params(), 1e-6)
    )
    assert "GA721" not in ids(
        findings(net, inputs=(features(),), optimizer=nn.Momentum(net.trainable_params(), 0.1, 0.9))
    )
    lars = nn.LARS(nn.Momentum(net.trainable_params(), 5.0, 0.9))  # LARS scales the rate per layer
    assert "GA721" not in ids(findings(net, inputs=(features(),), optimizer=lars))


def test_ga721_reports_each_group_of_its_own():
    net = mlp()
    groups = [{"params": net[0].trainable_params(), "lr": 0.5}, {"params": net[2].trainable_params()}]
    found = [
        f for f in findings(net, inputs=(features(),), optimizer=nn.Adam(groups, 1e-3)) if f[0] == "GA721"
    ]
    assert found == [("GA721", "warning", "Adam")]
