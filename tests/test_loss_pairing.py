"""GA401-GA404 and graphaudit.lossflow: what the network outputs, what the loss expects.

Covers every route a loss reaches the audit by (``loss_fn=``, ``nn.WithLossCell``,
``nn.TrainOneStepCell``, ``Model``, a custom loss cell built from functional losses) and the
ways an activation hides before the output (reshape chains, ``nn.Flatten``/``nn.Dropout``,
``nn.Dense(activation=...)``, an empty container).
"""

from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
from mindspore import Parameter, Tensor, mint, nn, ops
from mindspore.train import Model

import graphaudit
from graphaudit.checks._shared.lossflow import loss_expectation, output_activation

GA4 = ("GA401", "GA402", "GA403", "GA404")
RNG = np.random.default_rng(0)
X = Tensor(RNG.standard_normal((4, 6)).astype(np.float32))
Y_BINARY = Tensor(RNG.integers(0, 2, (4, 3)).astype(np.float32))
Y_CLASS = Tensor(RNG.integers(0, 3, (4,)).astype(np.int32))


def ga4(report: graphaudit.Report) -> list[tuple[str, str]]:
    return [(f.check_id, f.subject) for f in report.findings if f.check_id in GA4]


def only(report: graphaudit.Report, check_id: str):
    found = report.by_check(check_id)
    assert len(found) == 1, report
    return found[0]


# -- networks ------------------------------------------------------------------------------
class Reshaped(nn.Cell):
    """nn.Dense(activation=...) followed by a chain of shape-only ops and pass-through cells."""

    def __init__(self, activation=None) -> None:
        super().__init__()
        self.fc = nn.Dense(6, 3, activation=activation)
        self.flat = nn.Flatten()
        self.drop = nn.Dropout(p=0.1)

    def construct(self, x):
        y = self.fc(x).reshape(4, 3, 1).squeeze(-1)
        y = ops.expand_dims(y, 1).view(4, 3)
        y = self.drop(self.flat(y)).astype(ms.float32)
        return y[:, :]


class FunctionalHead(nn.Cell):
    """A Dense, then a functional activation, then transposes back and forth."""

    def __init__(self, activation) -> None:
        super().__init__()
        self.fc = nn.Dense(6, 3)
        self.activation = activation

    def construct(self, x):
        y = self.fc(x)
        if self.activation is not None:
            y = self.activation(y)
        return ops.transpose(ops.transpose(y, (1, 0)), (1, 0))


class SigmoidLeaf(nn.Cell):
    """A user-written cell without sub-cells: graphaudit does not see inside it."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = Parameter(Tensor(np.ones(3, np.float32)), name="scale")

    def construct(self, x):
        return ops.sigmoid(x * self.scale)


class Switchable(nn.Cell):
    """A block with sub-cells that is switched off: it hands its input back."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(3, 3)
        self.enabled = False

    def construct(self, x):
        if not self.enabled:
            return x
        return self.fc(x)


def graph_of(net: nn.Cell):
    return graphaudit.to_networkx(net, inputs=X)


# -- output_activation ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("activation", "expected"),
    [("sigmoid", "sigmoid"), ("softmax", "softmax"), ("logsoftmax", "log_softmax"), (None, "none")],
)
def test_dense_activation_found_behind_shape_ops(activation, expected):
    found, node = output_activation(graph_of(Reshaped(activation)))
    assert found == expected
    assert node == ("call:fc.activation#1" if activation else "call:fc#1")


@pytest.mark.parametrize(
    ("activation", "expected", "op_type"),
    [
        (ops.sigmoid, "sigmoid", "sigmoid"),
        (lambda y: y.sigmoid(), "sigmoid", "sigmoid"),
        (lambda y: ops.softmax(y, axis=-1), "softmax", "softmax"),
        (lambda y: mint.nn.functional.softmax(y, dim=-1), "softmax", "softmaxext"),
        (lambda y: ops.log_softmax(y, axis=-1), "log_softmax", "logsoftmax"),
        (lambda y: y * 2.0 + 1.0, "none", "add"),
        (ops.tanh, "unknown", "tanh"),
    ],
)
def test_functional_activation(activation, expected, op_type):
    graph = graph_of(FunctionalHead(activation))
    found, node = output_activation(graph)
    assert found == expected
    assert graph.nodes[node]["op_type"] == op_type


def test_activation_cells_in_a_sequential():
    assert output_activation(graph_of(nn.SequentialCell([nn.Dense(6, 3), nn.Sigmoid()])))[0] == "sigmoid"
    net = nn.SequentialCell([nn.Dense(6, 3), nn.LogSoftmax(), nn.Identity(), nn.SequentialCell([])])
    assert output_activation(graph_of(net)) == ("log_softmax", "call:1#1")


def test_pass_through_block_is_walked_through():
    net = nn.SequentialCell([nn.Dense(6, 3), nn.Softmax(), Switchable()])
    assert output_activation(graph_of(net)) == ("softmax", "call:1#1")


def test_user_leaf_cell_is_unknown_not_logits():
    net = nn.SequentialCell([nn.Dense(6, 3), SigmoidLeaf()])
    assert output_activation(graph_of(net)) == ("unknown", "call:1#1")


def test_untraced_graph_is_unknown():
    assert output_activation(graphaudit.to_networkx(nn.Dense(6, 3))) == ("unknown", None)


# -- loss_expectation -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("loss", "expected"),
    [
        (nn.BCEWithLogitsLoss(), "logits-sigmoid"),
        (mint.nn.BCEWithLogitsLoss(), "logits-sigmoid"),
        (nn.BCELoss(), "probabilities"),
        (mint.nn.BCELoss(), "probabilities"),
        (nn.CrossEntropyLoss(), "logits-softmax"),
        (nn.SoftmaxCrossEntropyWithLogits(sparse=True), "logits-softmax"),
        (nn.NLLLoss(), "log-probabilities"),
        (mint.nn.NLLLoss(), "log-probabilities"),
        (nn.MSELoss(), None),
    ],
)
def test_builtin_losses_known_by_class(loss, expected):
    assert loss_expectation(loss, None)[0] == expected


class Functional(nn.Cell):
    """A custom loss cell whose construct is one function of (logits, labels)."""

    def __init__(self, fn) -> None:
        super().__init__()
        self.fn = fn

    def construct(self, logits, labels):
        return self.fn(logits, labels)


class WrapsCrossEntropy(nn.Cell):
    """A custom loss holding a built-in loss cell, on flattened logits."""

    def __init__(self) -> None:
        super().__init__()
        self.ce = nn.CrossEntropyLoss()

    def construct(self, logits, labels):
        return self.ce(logits.reshape(logits.shape[0], -1), labels)


class MyBCE(nn.BCEWithLogitsLoss):
    pass


def _ones(x):
    return ops.ones_like(x)


CUSTOM_LOSSES = {
    "bce_with_logits": (
        lambda a, b: ops.binary_cross_entropy_with_logits(a, b, _ones(a), _ones(a)),
        Y_BINARY,
        "logits-sigmoid",
    ),
    "sigmoid_then_bce": (
        lambda a, b: ops.binary_cross_entropy(ops.clamp(ops.sigmoid(a), 1e-6, 1 - 1e-6), b),
        Y_BINARY,
        "logits-sigmoid",
    ),
    "bce_primitive": (
        lambda a, b: ops.BCEWithLogitsLoss()(a.view(-1), b.view(-1), _ones(b.view(-1)), _ones(b.view(-1))),
        Y_BINARY,
        "logits-sigmoid",
    ),
    "bce": (lambda a, b: ops.binary_cross_entropy(a, b), Y_BINARY, "probabilities"),
    "cross_entropy": (lambda a, b: ops.cross_entropy(a, b, label_smoothing=0.1), Y_CLASS, "logits-softmax"),
    "sparse_primitive": (
        lambda a, b: ops.SparseSoftmaxCrossEntropyWithLogits()(a, b),
        Y_CLASS,
        "logits-softmax",
    ),
    "log_softmax_then_nll": (lambda a, b: ops.nll_loss(ops.log_softmax(a, 1), b), Y_CLASS, "logits-softmax"),
    "softmax_log_nll": (lambda a, b: ops.nll_loss(ops.log(ops.softmax(a, 1)), b), Y_CLASS, "logits-softmax"),
    "log_then_nll": (lambda a, b: ops.nll_loss(ops.log(a), b), Y_CLASS, "probabilities"),
    "nll": (lambda a, b: ops.nll_loss(a, b), Y_CLASS, "log-probabilities"),
    "mse": (lambda a, b: ops.mse_loss(a, b), Y_BINARY, None),
}


@pytest.mark.parametrize("name", sorted(CUSTOM_LOSSES))
def test_custom_losses_known_by_their_operations(name):
    fn, labels, expected = CUSTOM_LOSSES[name]
    loss = Functional(fn)
    logits = Tensor(RNG.uniform(0.1, 0.9, (4, 3)).astype(np.float32))
    loss_graph = graphaudit.to_networkx(loss, inputs=(logits, labels))
    expects, evidence = loss_expectation(loss, loss_graph)
    assert expects == expected, evidence
    assert evidence.startswith("Functional")


def test_custom_loss_holding_a_builtin_loss_cell():
    loss = WrapsCrossEntropy()
    loss_graph = graphaudit.to_networkx(loss, inputs=(X[:, :3], Y_CLASS))
    assert loss_expectation(loss, loss_graph)[0] == "logits-softmax"


def test_subclass_of_a_builtin_loss():
    assert loss_expectation(MyBCE(), None) == (
        "logits-sigmoid",
        "nn.BCEWithLogitsLoss applies a sigmoid to its input itself",
    )


def test_unknown_custom_loss_without_graph():
    assert loss_expectation(Functional(ops.mse_loss), None) == (None, "Functional could not be traced")


# -- the checks, by route ---------------------------------------------------------------------
def test_ga401_with_loss_cell_and_dense_sigmoid():
    net = Reshaped("sigmoid")
    report = graphaudit.audit(nn.WithLossCell(net, nn.BCEWithLogitsLoss()), inputs=(X, Y_BINARY))
    finding = only(report, "GA401")
    assert finding.subject == "BCEWithLogitsLoss"
    assert finding.nodes == ("call:fc.activation#1", "output:0")
    assert "'fc.activation'" in finding.message and "nn.BCELoss" in finding.fix
    assert ga4(report) == [("GA401", "BCEWithLogitsLoss")]


def test_ga401_train_one_step_cell_with_custom_loss():
    net = FunctionalHead(ops.sigmoid)
    loss = Functional(lambda a, b: ops.binary_cross_entropy_with_logits(a, b, _ones(a), _ones(a)))
    train = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.SGD(net.trainable_params()))
    finding = only(graphaudit.audit(train, inputs=(X, Y_BINARY)), "GA401")
    assert finding.subject == "Functional"
    assert "ops.binary_cross_entropy_with_logits" in finding.message


def test_ga402_loss_fn_keyword():
    net = Reshaped()
    report = graphaudit.audit(net, nn.SGD(net.trainable_params()), inputs=X, loss_fn=nn.BCELoss())
    finding = only(report, "GA402")
    assert (finding.subject, finding.nodes) == ("BCELoss", ("call:fc#1", "output:0"))
    assert "BCEWithLogitsLoss" in finding.fix
    assert ga4(report) == [("GA402", "BCELoss")]


def test_ga402_custom_loss_rejecting_logits_is_traced_on_a_probe():
    # ops.binary_cross_entropy raises on CPU for logits outside [0, 1], so the loss cannot
    # be traced on the real logits: the check traces it again on stand-in probabilities.
    loss = Functional(lambda a, b: ops.binary_cross_entropy(a, b))
    report = graphaudit.audit(nn.WithLossCell(Reshaped(), loss), inputs=(X * 10, Y_BINARY))
    finding = only(report, "GA402")
    assert finding.subject == "Functional"
    assert "ops.binary_cross_entropy" in finding.message
    assert (ops.ones((2,), ms.float32) + 1).asnumpy().tolist() == [2.0, 2.0]  # MindSpore still usable


def test_ga403_model_with_softmax_cell():
    net = nn.SequentialCell([nn.Dense(6, 3), nn.Softmax()])
    model = Model(net, loss_fn=nn.CrossEntropyLoss(), optimizer=nn.Adam(net.trainable_params()))
    report = graphaudit.audit(model, inputs=(X, Y_CLASS))
    finding = only(report, "GA403")
    assert (finding.subject, finding.nodes) == ("CrossEntropyLoss", ("call:1#1", "output:0"))
    assert ga4(report) == [("GA403", "CrossEntropyLoss")]


def test_ga403_softmax_cross_entropy_with_logits_and_functional_softmax():
    net = FunctionalHead(lambda y: ops.softmax(y, axis=-1))
    report = graphaudit.audit(
        net, inputs=X, loss_fn=nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    )
    assert ga4(report) == [("GA403", "SoftmaxCrossEntropyWithLogits")]


@pytest.mark.parametrize(
    ("head", "says"),
    [
        (nn.Softmax(), "Replace the softmax (the Softmax cell at '1') with nn.LogSoftmax"),
        (nn.Sigmoid(), "Replace the sigmoid (the Sigmoid cell at '1') with nn.LogSoftmax"),
        (nn.Flatten(), "Add nn.LogSoftmax(axis=-1) at the end of the network"),
    ],
)
def test_ga404_names_the_fix_for_each_output(head, says):
    net = nn.SequentialCell([nn.Dense(6, 3), head])
    finding = only(graphaudit.audit(nn.WithLossCell(net, nn.NLLLoss()), inputs=(X, Y_CLASS)), "GA404")
    assert finding.subject == "NLLLoss"
    assert finding.fix.startswith(says), finding.fix
    if isinstance(head, nn.Flatten):
        assert "nn.CrossEntropyLoss" in finding.fix


def test_ga404_custom_nll_loss_with_functional_softmax():
    net = FunctionalHead(lambda y: ops.softmax(y, axis=-1))
    loss = Functional(lambda a, b: ops.nll_loss(a, b))
    finding = only(graphaudit.audit(net, inputs=X, loss_fn=loss), "GA404")
    assert "ops.log_softmax" in finding.fix


@pytest.mark.parametrize(
    ("net", "loss", "labels"),
    [
        (Reshaped(), nn.BCEWithLogitsLoss(), Y_BINARY),
        (Reshaped("sigmoid"), nn.BCELoss(), Y_BINARY),
        (Reshaped(), nn.CrossEntropyLoss(), Y_CLASS),
        (Reshaped("logsoftmax"), nn.CrossEntropyLoss(), Y_CLASS),  # log_softmax is idempotent
        (Reshaped("logsoftmax"), nn.NLLLoss(), Y_CLASS),
        (Reshaped("softmax"), nn.MSELoss(), Y_BINARY),
        (nn.SequentialCell([nn.Dense(6, 3), SigmoidLeaf()]), nn.BCELoss(), Y_BINARY),
        (nn.SequentialCell([nn.Dense(6, 3), SigmoidLeaf()]), nn.NLLLoss(), Y_CLASS),
    ],
)
def test_matching_or_unknown_pairings_are_silent(net, loss, labels):
    report = graphaudit.audit(nn.WithLossCell(net, loss), inputs=(X, labels))
    assert set(GA4) <= set(report.checks_run)
    assert ga4(report) == []


def test_without_loss_or_inputs():
    net = Reshaped("sigmoid")
    assert ga4(graphaudit.audit(net, inputs=X)) == []
    report = graphaudit.audit(net, loss_fn=nn.BCEWithLogitsLoss())
    assert set(GA4) <= set(report.skipped)


def test_a_loss_that_cannot_be_traced_is_a_check_not_run_with_the_reason():
    class NeedsImages(nn.Cell):  # a detector's loss takes more than (logits, label)
        def construct(self, feats, targets, imgs):
            return ops.binary_cross_entropy_with_logits(
                feats, targets, ops.ones_like(feats), ops.ones_like(feats)
            )

    report = graphaudit.audit(Reshaped("sigmoid"), inputs=X, label=Y_BINARY, loss_fn=NeedsImages())
    assert set(GA4) <= set(report.skipped) and not set(GA4) & set(report.checks_run)
    reason = report.skipped["GA401"]
    assert "could not be traced" in reason and "NeedsImages" in reason


# -- a part of the output: a detection head's branches, sliced again by its loss (issue 41) --------
Y_PARTS = Tensor(np.concatenate([RNG.random((4, 2)), RNG.integers(0, 2, (4, 3))], 1).astype(np.float32))


class TwoBranches(nn.Cell):
    """A box branch (2 values) and a class branch (3 scores), concatenated: ``(boxes | classes)``."""

    def __init__(self, box=None, cls=None) -> None:
        super().__init__()
        self.box = nn.SequentialCell([nn.Dense(6, 2)] + ([box] if box else []))
        self.cls = nn.SequentialCell([nn.Dense(6, 3)] + ([cls] if cls else []))

    def construct(self, x):
        return ops.concat((self.box(x), self.cls(x)), 1)


class DetectionLoss(nn.Cell):
    """Splits the head's output, moves the class part around, and gives it to BCE-with-logits."""

    def construct(self, pred, target):
        boxes, scores = ops.split(pred.view(4, 5, 1), (2, 3), 1)
        scores = scores.squeeze(-1).transpose(1, 0)
        cls = ops.binary_cross_entropy_with_logits(
            scores, target[:, 2:].transpose(1, 0), _ones(scores), _ones(scores)
        )
        return ops.mse_loss(boxes.squeeze(-1), target[:, :2]) + cls


def test_ga401_sigmoid_on_the_part_a_custom_loss_gives_to_bce_with_logits():
    net = TwoBranches(cls=nn.Sigmoid())
    report = graphaudit.audit(nn.WithLossCell(net, DetectionLoss()), inputs=(X, Y_PARTS))
    finding = only(report, "GA401")
    assert finding.subject == "DetectionLoss" and ga4(report) == [("GA401", "DetectionLoss")]
    assert finding.nodes == ("call:cls.1#1", "output:0")
    assert finding.message.startswith(
        "Part of the network's output is made by a sigmoid (the Sigmoid cell at 'cls.1')"
    )
    assert "ops.binary_cross_entropy_with_logits" in finding.message


@pytest.mark.parametrize(
    ("net", "loss", "labels"),
    [
        (TwoBranches(), DetectionLoss(), Y_PARTS),  # logits in the class part
        (TwoBranches(box=nn.Sigmoid()), DetectionLoss(), Y_PARTS),  # the loss regresses that part
        # a concat of probabilities is probabilities, for BCELoss (not "logits": no GA402)
        (TwoBranches(nn.Sigmoid(), nn.Sigmoid()), nn.BCELoss(), Tensor(np.ones((4, 5), np.float32))),
        (TwoBranches(), nn.BCEWithLogitsLoss(), Tensor(np.ones((4, 5), np.float32))),
    ],
)
def test_parts_paired_right_are_silent(net, loss, labels):
    report = graphaudit.audit(nn.WithLossCell(net, loss), inputs=(X, labels))
    assert set(GA4) <= set(report.checks_run)
    assert ga4(report) == [], str(report)


def test_a_concat_of_sigmoids_is_a_sigmoid_and_a_mixed_one_is_told_by_its_parts():
    from graphaudit.checks._shared.outputs import output_parts

    both = graphaudit.to_networkx(TwoBranches(nn.Sigmoid(), nn.Sigmoid()), inputs=X)
    assert output_activation(both) == ("sigmoid", "call:box.1#1")
    mixed = graphaudit.to_networkx(TwoBranches(cls=nn.Sigmoid()), inputs=X)
    assert output_activation(mixed) == ("unknown", "op:/concat#1")
    assert output_parts(mixed) == [("none", "call:box.0#1"), ("sigmoid", "call:cls.1#1")]
    report = graphaudit.audit(
        TwoBranches(nn.Sigmoid(), nn.Sigmoid()), inputs=X, label=Y_PARTS, loss_fn=nn.BCEWithLogitsLoss()
    )
    finding = only(report, "GA401")  # the whole output: each of its parts is a sigmoid's
    assert finding.message.startswith("The network's output is made by a sigmoid")
