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
RULES = ("GA05", "GA40", "GA41", "GA30", "GA31", "GA32", "GA72")


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


def test_ga051_severity_follows_the_chance_of_such_a_batch():
    # 8 labels of one class among 10: once in 10^7 batches by chance
    assert ("GA051", "warning", "label") in findings(
        mlp(), inputs=(features(8),), label=Tensor(np.full(8, 4, np.int32)), loss_fn=nn.CrossEntropyLoss()
    )
    assert ("GA051", "info", "label") in findings(
        mlp(), inputs=(features(5),), label=Tensor(np.full(5, 4, np.int32)), loss_fn=nn.CrossEntropyLoss()
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
    ignored[:19] = -100  # 5 labels remain: once in 10^4 batches
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
    assert "label=y" in report.text(not_run=True)


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
        net, inputs=(features(),), optimizer=nn.Adam(net.trainable_params(), 0.02)
    )  # above the usual range, within the plausible one (below 1e-5 on a small network: a warning, issue 24)
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


# -- issue 24: conv trunks, receptive fields, batch sizes, collapsed labels, rates -----------------
# Each kind of issue 24's table: two bad networks written the way users write them (a Keras-style
# port, a tutorial CNN) and the correct designs that look like them (real models' shapes).
def images(rows: int = 4, side: int = 32) -> Tensor:
    return Tensor(RNG.standard_normal((rows, 3, side, side)).astype(np.float32))


class KerasPortNoActivation(nn.Cell):
    """``Conv2D(32, 3)`` ported without ``activation="relu"``: Keras's default activation is linear."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, pad_mode="valid")
        self.conv2 = nn.Conv2d(32, 64, 3, pad_mode="valid")
        self.pool = nn.MaxPool2d(2, 2)
        self.fc = nn.Dense(64 * 14 * 14, 64)
        self.relu = nn.ReLU()
        self.out = nn.Dense(64, 10)

    def construct(self, x):
        x = self.pool(self.conv2(self.conv1(x)))
        return self.out(self.relu(self.fc(ops.flatten(x))))


def tutorial_cnn_bn_no_relu() -> nn.SequentialCell:
    """Conv → BatchNorm → Conv → BatchNorm → ReLU: the first block's ReLU was forgotten."""
    return nn.SequentialCell(
        [
            nn.Conv2d(3, 16, 3),
            nn.BatchNorm2d(16),
            nn.Conv2d(16, 16, 3),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Dense(16, 10),
        ]
    )


class MiniFPN(nn.Cell):
    """mindocr's DBFPN: 1x1 lateral projections, a top-down sum, 3x3 smoothing convolutions, no activation."""

    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, stride=2)
        self.c2 = nn.Conv2d(8, 16, 3, stride=2)
        self.relu = nn.ReLU()
        self.lateral = nn.CellList([nn.Conv2d(8, 16, 1), nn.Conv2d(16, 16, 1)])
        self.smooth = nn.CellList([nn.Conv2d(16, 4, 3), nn.Conv2d(16, 4, 3)])
        self.head = nn.Conv2d(8, 1, 1)

    def construct(self, x):
        f1 = self.relu(self.c1(x))
        f2 = self.relu(self.c2(f1))
        p2 = self.lateral[1](f2)
        p1 = self.lateral[0](f1) + ops.interpolate(p2, size=f1.shape[2:], mode="nearest")
        o1 = self.smooth[0](p1)
        o2 = ops.interpolate(self.smooth[1](p2), size=f1.shape[2:], mode="nearest")
        return self.head(ops.concat((o1, o2), axis=1))


def linear_bottleneck() -> nn.SequentialCell:
    """MobileNetV2's projection (1x1, BatchNorm, no activation) feeding the next block's 1x1 expansion."""
    return nn.SequentialCell(
        [
            nn.Conv2d(3, 32, 3, stride=2),
            nn.BatchNorm2d(32),
            nn.ReLU6(),
            nn.Conv2d(32, 16, 1),
            nn.BatchNorm2d(16),
            nn.Conv2d(16, 96, 1),
            nn.BatchNorm2d(96),
            nn.ReLU6(),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Dense(96, 10),
        ]
    )


def test_ga308_conv_trunks_without_activation():
    assert ("GA308", "warning", "conv2") in findings(KerasPortNoActivation(), inputs=(images(),))
    assert ("GA308", "warning", "2") in findings(tutorial_cnn_bn_no_relu(), inputs=(images(),))


def test_ga308_is_silent_on_an_fpn_neck_and_a_linear_bottleneck():
    assert "GA308" not in ids(findings(MiniFPN(), inputs=(images(),)))
    assert "GA308" not in ids(findings(linear_bottleneck(), inputs=(images(),)))


def saturating_cnn(act: type, blocks: int, pool_every: int) -> nn.SequentialCell:
    layers: list[nn.Cell] = [nn.Conv2d(3, 8, 3), act()]
    for i in range(1, blocks):
        if i % pool_every == 0:
            layers.append(nn.MaxPool2d(2, 2))
        layers += [nn.Conv2d(8, 8, 3), act()]
    return nn.SequentialCell([*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dense(8, 10)])


def test_ga309_saturating_activations_throughout_a_conv_trunk():
    lenet_sigmoid = saturating_cnn(nn.Sigmoid, 5, 1)  # a tutorial: sigmoid and pooling after every conv
    assert ("GA309", "warning", "0") in findings(lenet_sigmoid, inputs=(images(),))
    vgg_tanh = saturating_cnn(nn.Tanh, 6, 2)  # a Keras port: Conv2D(activation="tanh"), pooling per pair
    assert ("GA309", "warning", "0") in findings(vgg_tanh, inputs=(images(),))
    assert "GA309" not in ids(findings(saturating_cnn(nn.Tanh, 3, 1), inputs=(images(),)))
    assert "GA309" not in ids(findings(saturating_cnn(nn.ReLU, 6, 2), inputs=(images(),)))


def flat_cnn(convs: int, side: int, pool: bool = False, dense: bool = True) -> tuple[nn.Cell, Tensor]:
    layers: list[nn.Cell] = []
    for i in range(convs):
        layers += [nn.Conv2d(3 if i == 0 else 8, 8, 3), nn.ReLU()]
        if pool:
            layers.append(nn.MaxPool2d(2, 2))
    final = side // (2**convs) if pool else side
    tail = [nn.Flatten(), nn.Dense(8 * final * final, 10)] if dense else [nn.Conv2d(8, 3, 3)]
    return nn.SequentialCell([*layers, *tail]), images(2, side)


def test_ga315_trunks_that_never_downsample():
    tutorial, x = flat_cnn(4, 64)  # four 3x3 convolutions at 64x64, then Flatten → Dense
    assert "GA315" in ids(findings(tutorial, inputs=(x,)))
    keras, x = flat_cnn(3, 48)  # Conv2D(padding="same") x 3 without MaxPooling2D
    assert ("GA315", "warning", "4") in findings(keras, inputs=(x,))
    pooled, x = flat_cnn(4, 64, pool=True)
    assert "GA315" not in ids(findings(pooled, inputs=(x,)))
    denoiser, x = flat_cnn(6, 64, dense=False)  # image to image (DnCNN): full resolution on purpose
    assert "GA315" not in ids(findings(denoiser, inputs=(x,)))
    mnist, x = flat_cnn(3, 28)  # a receptive field of 7 on 28x28: a quarter of the input
    assert "GA315" not in ids(findings(mnist, inputs=(x,)))


def pooled(pool: nn.Cell) -> nn.SequentialCell:
    return nn.SequentialCell(
        [nn.Conv2d(3, 8, 3), nn.ReLU(), pool, nn.Conv2d(8, 8, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
         nn.Dense(8, 10)]
    )  # fmt: skip


def test_ga316_pooling_strides():
    assert ("GA316", "warning", "2") in findings(pooled(nn.MaxPool2d(2, 4)), inputs=(images(),))  # swapped
    keras = pooled(nn.MaxPool2d(kernel_size=2, stride=3))  # MaxPooling2D(pool_size=2, strides=3)
    assert ("GA316", "warning", "2") in findings(keras, inputs=(images(),))
    assert ("GA316", "info", "2") in findings(pooled(nn.AvgPool2d(8, 8)), inputs=(images(2, 64),))
    for fine in (nn.MaxPool2d(3, 2, pad_mode="same"), nn.MaxPool2d(2, 2)):
        assert "GA316" not in ids(findings(pooled(fine), inputs=(images(),)))


def batched(rows: int, batch: int, drop: bool = False):
    import mindspore.dataset as ds

    x = RNG.standard_normal((rows, 20)).astype(np.float32)
    y = (np.arange(rows) % 10).astype(np.int32)
    return ds.NumpySlicesDataset({"x": x, "label": y}, shuffle=True).batch(batch, drop_remainder=drop)


def dataset_findings(data, optimizer_of) -> list[tuple[str, str, str]]:
    net = mlp()
    return findings(net, inputs=(features(),), optimizer=optimizer_of(net), dataset=data)


def test_ga722_batch_sizes_against_the_data_set():
    adam = lambda net: nn.Adam(net.trainable_params(), 1e-3)  # noqa: E731
    full = dataset_findings(batched(1000, 1000), adam)  # a Keras port: model.fit(x, y, batch_size=len(x))
    assert ("GA722", "warning", "train/batch#1") in full
    empty = dataset_findings(batched(100, 128, drop=True), adam)  # a tutorial's batch of 128 on 100 rows
    assert ("GA722", "error", "train/batch#1") in empty
    assert "GA722" not in ids(dataset_findings(batched(1000, 32, drop=True), adam))
    assert "GA722" not in ids(
        dataset_findings(batched(64, 64), adam)
    )  # a small problem, full batch on purpose


def test_ga723_sgd_rates_against_the_batch_size():
    def sgd(rate: float, nesterov: bool = False):
        return lambda net: nn.SGD(net.trainable_params(), rate, momentum=0.9, nesterov=nesterov)

    assert ("GA723", "warning", "SGD") in dataset_findings(batched(512, 2, drop=True), sgd(0.1, True))
    momentum = lambda net: nn.Momentum(net.trainable_params(), 0.5, 0.9)  # noqa: E731
    assert ("GA723", "warning", "Momentum") in dataset_findings(batched(512, 4, drop=True), momentum)
    assert "GA723" not in ids(dataset_findings(batched(512, 128, drop=True), sgd(0.1, True)))
    adam = lambda net: nn.Adam(net.trainable_params(), 1e-3)  # noqa: E731
    assert "GA723" not in ids(dataset_findings(batched(512, 2, drop=True), adam))


def test_ga723_one_finding_per_parameter_group():
    """Two parameter groups, each at a rate 100x the linear scaling rule's: one finding for each (issue 39)."""
    net = mlp()
    groups = [
        {"params": net[0].trainable_params(), "lr": 0.5},
        {"params": net[2].trainable_params(), "lr": 0.2},
    ]
    optimizer = nn.SGD(groups, 0.1, momentum=0.9)
    report = graphaudit.audit(net, optimizer, inputs=(features(),), dataset=batched(512, 2, drop=True))
    found = [f for f in report.findings if f.check_id == "GA723"]
    assert [f.severity for f in found] == ["warning", "warning"]
    assert sorted(f.cause.group for f in found) == [0, 1]
    assert {f.nodes for f in found[:1]} != {f.nodes for f in found[1:]}  # each points at its own group
    assert all(f"for group {f.cause.group} " in f.message for f in found)


def test_a_rate_ga721_and_ga723_both_find_far_off_is_one_finding():
    """SGD at 20 with batches of 128: above GA721's plausible range and 400x the linear scaling rule's
    rate: one cause, one finding (GA723's numbers after GA721's); a rate only GA723 judges stays its own."""
    net = mlp()
    optimizer = nn.SGD(net.trainable_params(), 20.0)
    report = graphaudit.audit(net, optimizer, inputs=(features(),), dataset=batched(512, 128, drop=True))
    [found] = report.by_check("GA723")
    assert found.check_id == "GA721" and found.confirmed_by == ("GA723",), report
    assert "linear scaling rule" in found.message and found.cause.direction == "too large"
    small = nn.SGD(net.trainable_params(), 0.5)  # within GA721's range: GA723's own finding
    [alone] = graphaudit.audit(net, small, inputs=(features(),), dataset=batched(512, 2, drop=True)).by_check(
        "GA723"
    )
    assert alone.check_id == "GA723" and not alone.confirmed_by


def test_ga051_labels_collapsed_by_preprocessing():
    raw = RNG.integers(0, 10, 8)
    keras = Tensor((raw / 255).astype(np.int32))  # a Keras port: y_train = y_train / 255, then the cast
    report = graphaudit.audit(mlp(), None, inputs=(features(8),), label=keras, loss_fn=nn.CrossEntropyLoss())
    (finding,) = [f for f in report.findings if f.check_id == "GA051"]
    assert finding.severity == "warning" and "y / 255" in finding.message
    floored = Tensor(np.floor(RNG.integers(0, 10, 16) / 10).astype(np.int32))  # a tutorial's binning
    assert ("GA051", "warning", "label") in findings(
        mlp(), inputs=(features(16),), label=floored, loss_fn=nn.CrossEntropyLoss()
    )


def test_ga721_adam_far_below_its_range_on_a_small_network():
    small = mlp()
    assert ("GA721", "warning", "Adam") in findings(
        small, inputs=(features(),), optimizer=nn.Adam(small.trainable_params(), 1e-6)
    )
    cnn = saturating_cnn(nn.ReLU, 3, 1)
    assert ("GA721", "warning", "AdamWeightDecay") in findings(
        cnn, inputs=(images(),), optimizer=nn.AdamWeightDecay(cnn.trainable_params(), 5e-7)
    )
    large = nn.SequentialCell(
        [nn.Dense(20, 3200), nn.ReLU(), nn.Dense(3200, 3200), nn.ReLU(), nn.Dense(3200, 10)]
    )
    found = findings(large, inputs=(features(),), optimizer=nn.Adam(large.trainable_params(), 1e-6))
    assert ("GA721", "info", "Adam") in found  # a fine-tuning rate of a large model: the usual range only


class SqueezeExcite(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.reduce = nn.Dense(8, 2)
        self.expand = nn.Dense(2, 8)
        self.relu = nn.ReLU()
        self.head = nn.Dense(8, 10)

    def construct(self, x):
        x = self.relu(self.conv(x))
        pooled = ops.mean(x, (2, 3))
        gate = ops.sigmoid(self.expand(self.relu(self.reduce(pooled))))
        return self.head(ops.mean(x * gate.reshape(-1, 8, 1, 1), (2, 3)))


class DoubleRelu(nn.Cell):
    """A tutorial block that ends in its ReLU, and the caller applies another."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(20, 32)
        self.relu = nn.ReLU()
        self.out = nn.Dense(32, 10)

    def construct(self, x):
        return self.out(ops.relu(self.relu(self.fc(x))))


def test_ga317_activation_after_activation():
    keras = nn.SequentialCell([nn.Dense(20, 32, activation="relu"), nn.ReLU(), nn.Dense(32, 10)])
    assert ("GA317", "warning", "1") in findings(keras, inputs=(features(),))  # a ReLU applied twice
    assert ("GA317", "warning", "DoubleRelu") in findings(DoubleRelu(), inputs=(features(),))
    squeezed = nn.SequentialCell([nn.Dense(20, 32), nn.ReLU(), nn.Sigmoid(), nn.Dense(32, 10)])
    assert ("GA317", "info", "2") in findings(squeezed, inputs=(features(),))  # changes the values: info
    assert "GA317" not in ids(findings(SqueezeExcite(), inputs=(images(),)))


def test_ga318_even_kernels_that_overlap():
    tutorial = nn.SequentialCell([nn.Conv2d(3, 8, 4), nn.ReLU(), nn.Flatten(), nn.Dense(8 * 16 * 16, 10)])
    assert ("GA318", "info", "0") in findings(tutorial, inputs=(images(2, 16),))
    keras = nn.SequentialCell([nn.Conv2d(3, 8, 2, pad_mode="valid"), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                               nn.Flatten(), nn.Dense(8, 10)])  # fmt: skip
    assert ("GA318", "info", "0") in findings(keras, inputs=(images(2, 16),))
    patches = nn.SequentialCell(
        [nn.Conv2d(3, 8, 4, stride=4), nn.ReLU(), nn.Flatten(), nn.Dense(8 * 4 * 4, 10)]
    )
    assert "GA318" not in ids(findings(patches, inputs=(images(2, 16),)))


@pytest.mark.slow
def test_ga308_is_silent_on_mindocr_dbnet_resnet18_fpn():
    """Issue 19, pattern 5: neck.unify_channels.3 (1x1) feeds neck.out.3 (3x3) and the top-down sum."""
    import importlib.util

    if importlib.util.find_spec("mindocr") is None:
        pytest.skip("mindocr is not installed (scripts/setup-zoos.sh)")
    from addict import Dict
    from zoo import shims

    shims.import_mindocr()
    from mindocr.models import build_model

    cfg = {
        "type": "det",
        "transform": None,
        "backbone": {"name": "det_resnet18", "pretrained": False},
        "neck": {"name": "DBFPN", "out_channels": 256, "bias": False},
        "head": {"name": "DBHead", "k": 50, "bias": False, "adaptive": True},
    }
    net = build_model(Dict(cfg), ckpt_load_path=None, amp_level="O0")
    x = Tensor(RNG.standard_normal((2, 3, 64, 64)).astype(np.float32))
    report = graphaudit.audit(net, nn.AdamWeightDecay(net.trainable_params(), 1e-3), inputs=(x,))
    design = [f for f in report.findings if f.check_id.startswith(RULES) and f.severity != "info"]
    assert design == [], [str(f) for f in design]


class SpatialAttention(nn.Cell):
    """DBNet++'s adaptive scale fusion: a channel mean, a 1-channel 3x3 and 1x1 refinement, a sigmoid, a sum."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3)
        self.relu = nn.ReLU()
        self.spat_att = nn.SequentialCell([nn.Conv2d(1, 1, 3), nn.ReLU(), nn.Conv2d(1, 1, 1), nn.Sigmoid()])
        self.scale_att = nn.Conv2d(8, 4, 1)
        self.head = nn.Conv2d(4, 1, 1)

    def construct(self, x):
        reduced = self.relu(self.stem(x))
        spatial = self.spat_att(ops.mean(reduced, 1, keep_dims=True)) + reduced
        return self.head(ops.sigmoid(self.scale_att(spatial)))


def test_ga314_is_silent_on_a_one_channel_attention_map_refined_by_convolutions():
    assert "GA314" not in ids(findings(SpatialAttention(), inputs=(images(),)))


# -- issue 37: the kinds of Theia's benchmark the rules missed --------------------------------------
# For each kind, a bad network as users port it (Keras-style SequentialCell, a tutorial's construct)
# and correct designs that resemble it. Small maps and widths keep the audits cheap.
def gray(rows: int = 2, side: int = 28) -> Tensor:
    return Tensor(RNG.standard_normal((rows, 1, side, side)).astype(np.float32))


def stage(convs: int, width: int, first: int | None = None, pool: bool = True) -> list[nn.Cell]:
    layers: list[nn.Cell] = []
    for i in range(convs):
        layers += [nn.Conv2d(first if i == 0 and first else width, width, 3), nn.ReLU()]
    return [*layers, nn.MaxPool2d(2, 2)] if pool else layers


class TutorialNoPool(nn.Cell):
    """A tutorial's construct: conv1-conv2, pool, then conv3..conv7 at 16x16 (the second pool forgotten)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(3, 8, 3), nn.Conv2d(8, 8, 3)
        self.convs = nn.CellList([nn.Conv2d(8 if i == 0 else 16, 16, 3) for i in range(5)])
        self.relu, self.pool = nn.ReLU(), nn.MaxPool2d(2, 2)
        self.fc = nn.Dense(16 * 8 * 8, 10)

    def construct(self, x):
        x = self.pool(self.relu(self.conv2(self.relu(self.conv1(x)))))
        for conv in self.convs:
            x = self.relu(conv(x))
        return self.fc(ops.flatten(self.pool(x)))


class BasicBlock(nn.Cell):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(width, width, 3), nn.Conv2d(width, width, 3)
        self.bn1, self.bn2, self.relu = nn.BatchNorm2d(width), nn.BatchNorm2d(width), nn.ReLU()

    def construct(self, x):
        return self.relu(x + self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x))))))


class RepBlock(nn.Cell):
    """A re-parameterised RepVGG block: one 3x3 convolution and its ReLU, deployed as a plain stack."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.rbr_reparam, self.relu = nn.Conv2d(width, width, 3, has_bias=True), nn.ReLU()

    def construct(self, x):
        return self.relu(self.rbr_reparam(x))


def test_ga319_vgg_blocks_that_lost_their_pooling():
    keras = nn.SequentialCell([*stage(4, 8, 3), nn.Flatten(), nn.Dense(8 * 16 * 16, 10)])  # 4 at 32x32
    assert ("GA319", "warning", "0") in findings(keras, inputs=(images(2),))
    assert ("GA319", "warning", "convs.0") in findings(TutorialNoPool(), inputs=(images(2),))
    # VGG-16's stages (2, 2, 3, 3, 3), VGG-19's (2, 2, 4, 4, 4): silent at 32x32.
    for config in ((2, 2, 3, 3, 3), (2, 2, 4, 4, 4)):
        layers = [layer for i, n in enumerate(config) for layer in stage(n, 8, 3 if i == 0 else None)]
        vgg = nn.SequentialCell([*layers, nn.Flatten(), nn.Dense(8, 10)])
        assert "GA319" not in ids(findings(vgg, inputs=(images(2),)))
    stem = [nn.Conv2d(3, 8, 3, stride=2), nn.ReLU()]
    tail = [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dense(8, 10)]
    resnet = nn.SequentialCell([*stem, *(BasicBlock(8) for _ in range(4)), *tail])  # 8 convs, residual
    repvgg = nn.SequentialCell([*stem, *(RepBlock(8) for _ in range(6)), *tail])
    for fine in (resnet, repvgg):
        assert "GA319" not in ids(findings(fine, inputs=(images(2),)))


class TutorialConvNoRelu(nn.Cell):
    """conv1 → ReLU → pool, conv2 → pool → Dense: the second convolution's ReLU forgotten."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(3, 16, 3), nn.Conv2d(16, 32, 3)
        self.pool, self.relu = nn.MaxPool2d(2, 2), nn.ReLU()
        self.fc = nn.Dense(32 * 8 * 8, 10)

    def construct(self, x):
        x = self.pool(self.relu(self.conv1(x)))
        return self.fc(ops.flatten(self.pool(self.conv2(x))))


def test_ga308_conv_then_max_pooling_without_activation():
    # A Keras port with no activation at all (Conv2D's default is linear): a warning all the same.
    keras = nn.SequentialCell([nn.Conv2d(3, 16, 3), nn.MaxPool2d(2, 2), nn.Conv2d(16, 32, 3), nn.MaxPool2d(2, 2),
                               nn.Flatten(), nn.Dense(32 * 8 * 8, 10)])  # fmt: skip
    # 0 -> 2 and 3 -> 5 are one cause: one finding on the network.
    assert ("GA308", "warning", "(root)") in findings(keras, inputs=(images(2),))
    assert ("GA308", "warning", "fc") in findings(TutorialConvNoRelu(), inputs=(images(2),))
    # conv → pool → ReLU (the activation after the pooling, as many ports order it) is correct.
    reordered = nn.SequentialCell([nn.Conv2d(3, 16, 3), nn.MaxPool2d(2, 2), nn.ReLU(), nn.Conv2d(16, 32, 3),
                                   nn.BatchNorm2d(32), nn.MaxPool2d(2, 2), nn.ReLU(), nn.Flatten(),
                                   nn.Dense(32 * 8 * 8, 10)])  # fmt: skip
    assert "GA308" not in ids(findings(reordered, inputs=(images(2),)))


def test_ga309_sigmoid_hidden_activations_in_a_conv_trunk():
    keras = nn.SequentialCell([nn.Conv2d(3, 16, 3), nn.Sigmoid(), nn.MaxPool2d(2, 2), nn.Conv2d(16, 16, 3),
                               nn.Sigmoid(), nn.MaxPool2d(2, 2), nn.Flatten(), nn.Dense(16 * 8 * 8, 10)])  # fmt: skip
    assert ("GA309", "warning", "0") in findings(keras, inputs=(images(2),))
    one = nn.SequentialCell([nn.Conv2d(3, 16, 3), nn.ReLU(), nn.MaxPool2d(2, 2), nn.Conv2d(16, 16, 3),
                             nn.Sigmoid(), nn.MaxPool2d(2, 2), nn.Flatten(), nn.Dense(16 * 8 * 8, 10)])  # fmt: skip
    assert ("GA309", "info", "3") in findings(one, inputs=(images(2),))
    binary = nn.SequentialCell([*stage(2, 16, 3), nn.Flatten(), nn.Dense(16 * 16 * 16, 1), nn.Sigmoid()])
    assert "GA309" not in ids(findings(binary, inputs=(images(2),)))  # a sigmoid output, not a hidden one
    assert "GA309" not in ids(findings(SqueezeExcite(), inputs=(images(2),)))  # a gate
    tanh = saturating_cnn(nn.Tanh, 3, 1)  # a tanh LeNet: zero-centred, judged from 4
    assert "GA309" not in ids(findings(tanh, inputs=(images(2),)))


def test_ga722_batches_of_a_tenth_of_the_data_and_of_one_sample():
    adam = lambda net: nn.Adam(net.trainable_params(), 1e-3)  # noqa: E731
    tenth = dataset_findings(batched(10000, 2000), adam)  # model.fit(x, y, batch_size=2000): 5 steps
    assert ("GA722", "warning", "train/batch#1") in tenth
    single = dataset_findings(batched(10000, 1), adam)  # a tutorial's DataLoader(batch_size=1)
    assert ("GA722", "info", "train/batch#1") in single
    assert "GA722" not in ids(dataset_findings(batched(10000, 128), adam))
    assert "GA722" not in ids(dataset_findings(batched(2048, 256), adam))  # 8 steps of a small set


def test_ga320_capacity_below_the_classes_of_images():
    tiny = nn.SequentialCell([nn.Conv2d(3, 4, 3), nn.ReLU(), nn.MaxPool2d(2, 2), nn.Flatten(),
                              nn.Dense(4 * 16 * 16, 10)])  # fmt: skip
    assert ("GA320", "warning", "0") in findings(tiny, inputs=(images(2),))
    mlp8 = nn.SequentialCell([nn.Flatten(), nn.Dense(3 * 32 * 32, 8), nn.ReLU(), nn.Dense(8, 10)])
    assert ("GA320", "warning", "1") in findings(mlp8, inputs=(images(2),))
    lenet1 = nn.SequentialCell([nn.Conv2d(1, 4, 5), nn.Tanh(), nn.AvgPool2d(2, 2), nn.Conv2d(4, 12, 5),
                                nn.Tanh(), nn.AvgPool2d(2, 2), nn.Flatten(), nn.Dense(12 * 7 * 7, 10)])  # fmt: skip
    logistic = nn.SequentialCell([nn.Flatten(), nn.Dense(28 * 28, 10)])
    for fine in (lenet1, logistic):  # the smallest classic CNN, and a linear model
        assert "GA320" not in ids(findings(fine, inputs=(gray(),)))
    keyword = nn.SequentialCell([nn.Conv2d(1, 8, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                 nn.Dense(8, 12)])  # fmt: skip
    spectrogram = Tensor(RNG.standard_normal((2, 1, 49, 10)).astype(np.float32))  # a keyword-spotting MFCC
    assert "GA320" not in ids(findings(keyword, inputs=(spectrogram,)))
