"""Too many and too few epochs (GA953, GA954) stay silent on the curves of healthy runs of real data.

Measured on ``tests/healthy_recipes.py`` (issue 38): a healthy classifier's validation
cross-entropy creeps up above its best at a constant accuracy as it grows confident (digits,
Momentum, 12 epochs: +4%, accuracy 0.98 throughout; breast cancer, AdamW: +51% at 0.958), and on separable data the loss keeps
falling a few percent an epoch long after nothing is left to gain (wine: 0.0097, still 3.7% an
epoch). Runs that really overfit lose accuracy (30% label noise: 0.93 to 0.76-0.81) or climb
far above their best; runs stopped early gain a large share of their whole fall at the last
epoch. The curves below are those shapes, judged through ``audit(watched=...)``.
"""

from __future__ import annotations

import math

import mindspore as ms
import mindspore.dataset as ds
import numpy as np
import pytest
from mindspore import nn

import graphaudit
from graphaudit.errors import ArgumentError
from graphaudit.evidence.run_record import RunRecord
from graphaudit.watch.validation import Validation, accuracy_in, validate


def judged(validation: list[float], accuracy: list[float] | None = None, *, start: float = 2.3) -> list[str]:
    """The GA953/GA954 findings on a run of one epoch per evaluation whose training loss keeps falling."""
    epochs = len(validation)
    train = [start * 0.8**e for e in range(epochs)]  # each epoch's mean, falling
    record = RunRecord(("w",), losses=[start, *train[1:]], epochs=list(range(1, epochs + 1)), finished=True)
    for epoch, loss in enumerate(validation, 1):
        known = accuracy[epoch - 1] if accuracy is not None else None
        record.add_validation(epoch, Validation(loss, known, 450 if known is not None else 0))
    report = graphaudit.audit(nn.Dense(2, 2), watched=record, select=["GA953", "GA954"], config=False)
    return [f.check_id for f in report.findings]


HEALTHY_CREEP = [0.30, 0.16, 0.12, 0.105, 0.10, 0.102, 0.103, 0.104]  # digits, Momentum: +4% after the best


def test_a_confident_classifier_whose_accuracy_holds_is_not_overfitting():
    assert judged(HEALTHY_CREEP, [0.91, 0.95, 0.97, 0.975, 0.978, 0.98, 0.978, 0.98]) == []


def test_the_same_creep_without_an_accuracy_is_not_overfitting_either():
    assert judged(HEALTHY_CREEP) == []


def test_a_falling_accuracy_is_overfitting_at_the_first_rises():
    # 30% label noise measured: first rises of 2-4%, the accuracy 0.93 -> 0.81
    losses = [0.50, 0.32, 0.30, 0.31, 0.312, 0.309]
    assert judged(losses, [0.85, 0.92, 0.93, 0.88, 0.84, 0.81]) == ["GA953"]


def test_an_accuracy_that_falls_within_its_noise_is_not():
    losses = [0.50, 0.32, 0.30, 0.31, 0.312, 0.309]
    assert judged(losses, [0.85, 0.92, 0.93, 0.925, 0.93, 0.92]) == []  # 2 standard errors of 450: 2.4 points


def test_a_loss_far_above_its_best_is_overfitting_without_an_accuracy():
    climbing = [1.42, 1.44, 1.50, 1.58, 1.69, 1.84, 2.03]  # samples/GA953/bad.py: memorised random labels
    assert judged(climbing) == ["GA953"]


def test_a_held_accuracy_is_not_overfitting_however_far_the_loss_climbs():
    # breast cancer, AdamW with a cosine decay, 20 epochs: +51% after the best epoch, 0.958 throughout
    losses = [0.20, 0.13, 0.115, 0.110, 0.12, 0.13, 0.14, 0.15, 0.166]
    assert judged(losses, [0.94, 0.95, 0.958, 0.958, 0.958, 0.951, 0.958, 0.958, 0.958]) == []
    assert judged(losses) == ["GA953"]


def test_a_run_stopped_while_it_gains_a_large_share_is_too_few_epochs():
    assert judged([1.34, 1.29, 1.24], start=1.56) == ["GA954"]  # samples/GA954/bad.py: the last gained 15%


def test_a_separable_run_still_falling_by_a_sliver_is_not_too_few_epochs():
    wine = [0.05 / e for e in range(1, 11)]  # 1/t: 10% an epoch at the end, 0.05% of the fall from ln 3
    assert judged(wine, [1.0] * 10, start=math.log(3)) == []


# -- the accuracy the watch reads -----------------------------------------------------------
class Logits(nn.Cell):
    def construct(self, x):
        return x


def _data(labels: np.ndarray) -> ds.Dataset:
    scores = np.array([[2.0, 0.0], [0.0, 2.0], [2.0, 0.0], [0.0, 2.0], [2.0, 0.0]], np.float32)
    return ds.NumpySlicesDataset({"x": scores, "y": labels}, shuffle=False).batch(2)


def test_the_accuracy_is_counted_over_samples_with_class_or_one_hot_labels():
    labels = np.array([0, 1, 1, 1, 0], np.int32)  # one wrong of 5, in batches of 2, 2, 1
    result = validate(Logits(), nn.CrossEntropyLoss(), _data(labels))
    assert (result.accuracy, result.samples) == (0.8, 5)
    one_hot = np.eye(2, dtype=np.float32)[labels]
    assert validate(Logits(), nn.CrossEntropyLoss(), _data(one_hot)).accuracy == 0.8


def test_no_accuracy_for_outputs_that_are_not_class_scores():
    x = np.arange(6, dtype=np.float32).reshape(6, 1)
    data = ds.NumpySlicesDataset({"x": x, "y": x * 2}, shuffle=False).batch(4)
    assert validate(Logits(), nn.MSELoss(), data).accuracy is None


def test_model_eval_accuracy_is_read_with_the_samples_it_counted():
    data = _data(np.zeros(5, np.int32))
    assert accuracy_in({"loss": 0.5, "accuracy": 0.75}, data) == (0.75, 5)
    assert accuracy_in({"loss": 0.5, "accuracy": float("nan")}, data) is None


def test_model_fit_and_eval_dataset_record_the_accuracy_beside_the_loss():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    net = nn.Dense(2, 2)
    net.weight.set_data(ms.Tensor(np.eye(2, dtype=np.float32)))
    net.bias.set_data(ms.Tensor(np.zeros(2, np.float32)))
    labels = np.array([0, 1, 1, 1, 0], np.int32)
    model = ms.train.Model(net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), 0.0), metrics={"loss"})
    fitted = graphaudit.Watch(fail_on="never")
    model.fit(1, _data(labels), _data(labels), callbacks=[fitted], dataset_sink_mode=False)
    watched = graphaudit.Watch(fail_on="never", eval_dataset=_data(labels))
    model.train(1, _data(labels), callbacks=[watched], dataset_sink_mode=False)
    for watch in (fitted, watched):
        assert watch.record.validation_accuracy == [(0.8, 5)]


def test_a_loop_passes_its_accuracy_and_a_wrong_one_is_refused():
    net = nn.Dense(2, 2)
    optimizer = nn.SGD(net.trainable_params(), 0.0)
    with graphaudit.watch(net, optimizer, fail_on="never") as w:
        w.step(loss=1.0)
        w.validate(0.9, accuracy=0.7, samples=100)
        with pytest.raises(ArgumentError, match="fraction"):
            w.validate(0.9, accuracy=70, samples=100)
    assert w.record.validation_accuracy == [(0.7, 100)]
