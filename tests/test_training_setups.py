"""What users train with: every training style is audited as what it trains, and never trained.

MindSpore's own wrappers (Model with and without amp_level, TrainOneStepCell,
TrainOneStepWithLossScaleCell, amp.build_train_network) and the patterns of the model zoos'
own wrappers: a train-step cell that is not a TrainOneStepCell (it holds the network, an
optimizer, a loss scale and computes its gradients itself), a network-with-loss taking
``(images, targets)`` whose loss takes ``(features, targets, images)``.
"""

from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, amp, nn, ops

import graphaudit
from graphaudit.capture.training.optimizer import optimizer_state_parameters

X = Tensor(np.random.default_rng(0).random((4, 4), dtype=np.float32))
Y = Tensor(np.array([0, 1, 2, 0], np.int32))


def classifier() -> nn.Cell:
    return nn.SequentialCell([nn.Dense(4, 8, has_bias=False), nn.BatchNorm1d(8), nn.ReLU(), nn.Dense(8, 3)])


def state(*cells: nn.Cell) -> dict[str, bytes]:
    """Every value a training step can change: the network's parameters and the optimizers' state."""
    found = {}
    for cell in cells:
        params = optimizer_state_parameters(cell) if isinstance(cell, nn.Optimizer) else cell.get_parameters()
        for p in params:
            found[f"{id(p)}:{p.name}"] = p.asnumpy().tobytes()
    return found


# -- zoo-style wrappers -----------------------------------------------------------------------------


class Head(nn.Cell):
    def __init__(self, sigmoid: bool) -> None:
        super().__init__()
        self.conv = nn.Dense(8, 5)
        self.sigmoid = sigmoid

    def construct(self, x):
        out = self.conv(ops.relu(x))
        return ops.sigmoid(out) if self.sigmoid else out


class Detector(nn.Cell):
    def __init__(self, sigmoid: bool = False) -> None:
        super().__init__()
        self.backbone = nn.Dense(4, 8)
        self.head = Head(sigmoid)

    def construct(self, x):
        features = self.backbone(x)
        return self.head(features), features  # the outputs of several levels, as a tuple


class DetectionLoss(nn.Cell):
    """A detector's loss: BCE-with-logits on a slice of the head's output, and more arguments."""

    def construct(self, feats, targets, imgs):
        objectness = feats[0][:, 0]
        weight = ops.ones_like(objectness)
        return (
            ops.binary_cross_entropy_with_logits(objectness, targets[:, 0], weight, weight) + imgs.mean() * 0
        )


class NetWithLoss(nn.Cell):
    def __init__(self, net: nn.Cell, loss: nn.Cell) -> None:
        super().__init__()
        self.net, self.loss = net, loss

    def construct(self, imgs, targets):
        return self.loss(self.net(imgs), targets, imgs)


class TrainStep(nn.Cell):
    """A zoo's own train step: not a TrainOneStepCell; gradients, a loss scale, the optimizer."""

    def __init__(self, network: nn.Cell, optimizer: nn.Optimizer) -> None:
        super().__init__()
        self.network, self.optimizer = network, optimizer
        self.scale = Tensor(1024.0)
        self.grad_fn = ops.value_and_grad(self.network, None, optimizer.parameters)

    def construct(self, *inputs):
        loss, grads = self.grad_fn(*inputs)
        grads = ops.clip_by_global_norm(grads, 10.0)
        self.optimizer(grads)
        return loss


DET_INPUTS = (X, Tensor(np.ones((4, 5), np.float32)))


def detector_step(sigmoid: bool = False) -> tuple[nn.Cell, Detector, nn.Optimizer]:
    det = Detector(sigmoid)
    optimizer = nn.Adam(det.trainable_params(), 1e-3)
    return TrainStep(NetWithLoss(det, DetectionLoss()), optimizer), det, optimizer


def test_a_zoo_train_step_is_audited_as_what_it_trains_and_never_trains():
    step, det, optimizer = detector_step()
    before = state(det, optimizer)
    report = graphaudit.audit(step, inputs=DET_INPUTS, probe=True)
    assert state(det, optimizer) == before  # weights, moments, beta powers, global step
    assert report.network == "NetWithLoss" and report.unwrapped == ("TrainStep",)
    assert "GA201" in report.checks_run and "GA905" in report.checks_run  # the optimizer was found
    assert report.ok and not report.of_severity("warning"), str(report)


def test_the_loss_inside_a_network_with_loss_is_traced_where_it_is_called():
    step, _, _ = detector_step(sigmoid=True)
    (finding,) = graphaudit.audit(step, inputs=DET_INPUTS).by_check("GA401")
    assert finding.subject == "DetectionLoss" and "net.head" in finding.message


def test_capturing_a_train_step_itself_restores_everything_it_trained():
    step, det, optimizer = detector_step()
    before = state(det, optimizer)
    graph = graphaudit.to_networkx(step, inputs=DET_INPUTS)  # runs a real step, then puts it back
    assert graph.graph["traced"] and state(det, optimizer) == before


def test_a_cell_holding_an_optimizer_of_another_network_is_refused_before_running():
    step = TrainStep(NetWithLoss(Detector(), DetectionLoss()), nn.Adam(Detector().trainable_params()))
    with pytest.raises(graphaudit.GraphAuditError, match="cannot tell which network it trains"):
        graphaudit.audit(step, inputs=DET_INPUTS)


def test_a_train_one_step_cell_around_a_network_with_loss_gets_all_the_inputs():
    det = Detector(sigmoid=True)
    optimizer = nn.Momentum(det.trainable_params(), 0.01, 0.9)
    train = nn.TrainOneStepCell(NetWithLoss(det, DetectionLoss()), optimizer)
    report = graphaudit.audit(train, inputs=DET_INPUTS)  # (images, targets): no label split off
    assert report.graph.nodes["input:1"]["shape"] == "[4, 5]"
    assert [f.check_id for f in report.of_severity("error")] == ["GA401"]


# -- MindSpore's own training styles ----------------------------------------------------------------


def _styles() -> dict[str, object]:
    def built(make):
        net = classifier()
        return make(net, nn.Momentum(net.trainable_params(), 0.01, 0.9), nn.CrossEntropyLoss())

    return {
        "model": lambda: built(lambda n, o, loss: ms.train.Model(n, loss, o)),
        "model-O2": lambda: built(
            lambda n, o, loss: ms.train.Model(n, loss, o, amp_level="O2", loss_scale_manager=None)  # CPU
        ),
        "train-one-step": lambda: built(lambda n, o, loss: nn.TrainOneStepCell(nn.WithLossCell(n, loss), o)),
        "loss-scale": lambda: built(
            lambda n, o, loss: nn.TrainOneStepWithLossScaleCell(
                nn.WithLossCell(n, loss), o, scale_sense=Tensor(1024.0)
            )
        ),
        "build-train-network-O2": lambda: built(
            lambda n, o, loss: amp.build_train_network(n, o, loss, level="O2", loss_scale_manager=None)
        ),
    }


@pytest.mark.parametrize("style", sorted(_styles()))
def test_every_training_style_audits_the_backbone_with_its_loss_and_optimizer(style):
    setup = _styles()[style]()
    report = graphaudit.audit(setup, inputs=(X, Y), probe=True)
    assert report.network == "SequentialCell", report.unwrapped
    assert {"GA201", "GA401", "GA901"} <= set(report.checks_run)  # optimizer, loss and the step found
    assert report.ok, str(report)


def test_a_model_with_amp_audits_what_the_amp_level_made():
    net = classifier()
    optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)
    ms.train.Model(net, nn.CrossEntropyLoss(), optimizer, amp_level="O3", loss_scale_manager=None)
    report = graphaudit.audit(net, optimizer, inputs=X)
    dtypes = {d["dtype"] for _, _, d in report.graph.edges(data=True) if d["kind"] == "flows"}
    assert "Float16" in dtypes  # O3 casts the network itself: the audit sees it as it will train
    assert report.ok, str(report)


# -- the functional style and the training loop ----------------------------------------------------


def test_the_weights_a_functional_step_differentiates_are_compared_with_the_optimizer():
    net = nn.SequentialCell([nn.Dense(4, 4), nn.Dense(4, 4)])
    optimizer = nn.SGD(net.trainable_params(), 0.1)
    assert not graphaudit.audit(net, optimizer, grad_weights=optimizer.parameters).by_check("GA207")
    (missing,) = graphaudit.audit(net, optimizer, grad_weights=net[0].trainable_params()).by_check("GA207")
    assert missing.subject == "1" and missing.subjects == ("1.weight", "1.bias")
    other = nn.SequentialCell([nn.Dense(4, 4), nn.Dense(4, 4)])
    found = graphaudit.audit(net, optimizer, grad_weights=other.trainable_params()).by_check("GA207")
    assert any("differentiated (grad_weights) but not in the optimizer" in f.message for f in found)
    with pytest.raises(TypeError, match="grad_weights= takes the list of Parameters"):
        graphaudit.audit(net, optimizer, grad_weights="weights")


def _dataset():
    data = {
        "x": np.random.default_rng(1).random((8, 4), dtype=np.float32),
        "y": np.arange(8, dtype=np.int32) % 3,
    }
    return ms.dataset.NumpySlicesDataset(data, shuffle=False).batch(4)


def test_the_audit_callback_stops_training_before_its_first_step():
    net = classifier()
    optimizer = nn.Momentum(net[0].trainable_params(), 0.01, 0.9)  # the rest is left out
    before = state(net, optimizer)
    model = ms.train.Model(net, nn.CrossEntropyLoss(), optimizer)
    callback = graphaudit.AuditCallback()
    with pytest.raises(graphaudit.AuditFailed) as stopped:
        model.train(1, _dataset(), callbacks=[callback], dataset_sink_mode=False)
    assert stopped.value.report is callback.report and not callback.report.ok
    assert {f.check_id for f in callback.report.of_severity("error")} == {"GA201"}
    assert state(net, optimizer) == before  # no step ran


def test_training_flags_puts_every_flag_back():
    from graphaudit.capture.network.isolation import training_flags
    from graphaudit.checks._shared.cells import training_flag_set

    net = classifier()
    net[1].set_train(True)
    flags = [(c.training, training_flag_set(c)) for _, c in net.cells_and_names()]
    with training_flags(net, True):
        assert all(c.training for _, c in net.cells_and_names())
    assert [(c.training, training_flag_set(c)) for _, c in net.cells_and_names()] == flags


def test_the_audit_callback_lets_a_clean_network_train_and_keeps_the_report():
    net = classifier()
    optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)
    before = state(net)
    callback = graphaudit.AuditCallback(fail_on="warning")
    ms.train.Model(net, nn.CrossEntropyLoss(), optimizer).train(
        1, _dataset(), callbacks=[callback], dataset_sink_mode=False
    )
    assert callback.report.ok and not callback.report.of_severity("warning"), str(callback.report)
    assert callback.report.graph.graph["traced"]  # audited on the first real batch
    assert state(net) != before  # and then it trained
    with pytest.raises(graphaudit.GraphAuditError, match="fail_on"):
        graphaudit.AuditCallback(fail_on="sometimes")


# -- found on the model zoos (tests/test_zoos.py) ----------------------------------------------------


class NetWithOpLoss(nn.Cell):
    """A network-with-loss whose loss is an operation, not a loss cell (mindaudio's ``NetWithCTCLoss``)."""

    def __init__(self) -> None:
        super().__init__(auto_prefix=False)
        self.network = classifier()

    def construct(self, x, y):
        return ops.cross_entropy(self.network(x), y)


def test_a_train_step_around_a_network_computing_its_loss_by_an_operation_is_probed():
    net = NetWithOpLoss()
    optimizer = nn.Adam(net.trainable_params(), 1e-3)
    train = nn.TrainOneStepCell(net, optimizer)
    before = state(net, optimizer)
    report = graphaudit.audit(ms.train.Model(train), inputs=(X, Y), probe=True)  # no ProbeInputError
    assert state(net, optimizer) == before
    assert report.network == "NetWithOpLoss" and report.unwrapped == ("Model", "TrainOneStepCell")
    assert "GA901" in report.checks_run and report.ok and not report.of_severity("warning"), str(report)
    (no_loss,) = [n for n in report.not_run if n.check_id == "GA401"]
    assert "holds no loss cell" in no_loss.reason


@pytest.mark.parametrize(
    "schedule", [lambda: [0.0] + [0.01] * 30, lambda: nn.WarmUpLR(0.01, 2)], ids=["per-step-list", "WarmUpLR"]
)
def test_a_warm_up_from_zero_is_one_info_finding_not_an_error_for_every_parameter(schedule):
    net = classifier()
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=schedule(), momentum=0.9)
    report = graphaudit.audit(net, optimizer, inputs=X, label=Y, loss_fn=nn.CrossEntropyLoss(), probe=True)
    assert report.ok, str(report)
    (warm_up,) = report.by_check("GA901")
    assert warm_up.severity == "info" and warm_up.subject == "(root)"
    assert set(warm_up.subjects) == {"0.weight", "1.gamma", "1.beta", "3.weight", "3.bias"}
    assert "0 at step 0" in warm_up.message and "from step 1 on" in warm_up.message
    static = nn.Momentum(net.trainable_params(), learning_rate=0.0, momentum=0.9)  # zero for good: an error
    report = graphaudit.audit(net, static, inputs=X, label=Y, loss_fn=nn.CrossEntropyLoss(), probe=True)
    assert {f.severity for f in report.by_check("GA901")} == {"error"}


def test_a_declared_tie_that_is_a_copy_is_named_by_attribute_path():
    class LanguageModel(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(10, 6)
            self.decoder = nn.Dense(6, 10, has_bias=False)
            self.decoder.weight = ms.Parameter(self.embed.embedding_table.asnumpy(), name="lm_head.weight")

        def construct(self, ids):
            return self.decoder(self.embed(ids))

    net = LanguageModel()
    spec = graphaudit.Spec(shared_parameters=[["embed.embedding_table", "decoder.weight"]])
    (untied,) = graphaudit.audit(net, spec=spec).by_check("GA103")
    assert untied.subject == "decoder.weight"
    assert "decoder.weight (Parameter name 'lm_head.weight')" in untied.message


def test_a_loss_taking_more_than_output_and_label_is_called_as_the_train_step_calls_it():
    """``loss_fn(network(x), targets, imgs)`` (mindyolo's step): the whole output, the label tuple spread."""
    from graphaudit.capture.training.loss import loss_calls

    det, loss = Detector(), DetectionLoss()
    output = det(X)
    targets, imgs = DET_INPUTS[1], X
    (arguments, first_tensors), *fallbacks = loss_calls(loss, output, (targets, imgs))
    assert arguments == (output, targets, imgs) and first_tensors == 2
    assert loss(*arguments).shape == ()  # it runs as the step runs it
    assert all(first_tensors == 1 for _, first_tensors in fallbacks)  # then the first tensor alone
    # one tensor: (logits, label), on stand-in logits of 0.5 first, then on the real ones
    ((stand_in, label), _), ((real, again), _) = loss_calls(nn.MSELoss(), output[0], Y)
    assert stand_in.shape == output[0].shape and stand_in.dtype == output[0].dtype
    assert (stand_in.asnumpy() == 0.5).all() and label is Y
    assert real is output[0] and again is Y


def test_a_schedule_read_past_its_span_still_gives_the_rate_the_next_update_uses():
    from graphaudit.capture.training.lr_schedules import read_schedules

    net = classifier()
    decay = nn.PolynomialDecayLR(learning_rate=0.1, end_learning_rate=0.0, decay_steps=4, power=1.0)
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=decay, momentum=0.9)
    optimizer.global_step.set_data(Tensor(np.array([10], np.int32)))  # resumed training, past the decay
    (schedule,) = read_schedules(optimizer)
    assert max(schedule.steps) < 10  # the schedule's own span is what is sampled
    now = schedule.now()
    assert now is not None and (now.value, now.step, now.first_nonzero_step) == (0.0, 10, None)
