"""The validation loss the watch judges is the loss per sample, however the last batch falls.

A mean of batch means lets a last batch of one sample weigh as much as a full batch: one
overconfident mistake in it drove the validation curve of a healthy run up, and GA953 called
the run overfitting (issue 38, on scikit-learn's digits: 450 validation samples in batches of
64, a last batch of 2). ``Watch(eval_dataset=...)`` and ``Model.fit(valid_dataset=...)`` (whose
``Loss`` metric averages batch means) both record the mean over samples.
"""

from __future__ import annotations

import mindspore as ms
import mindspore.dataset as ds
import numpy as np
import pytest
from mindspore import nn

import graphaudit
from graphaudit.watch.validation import even_batches, validate


class Fixed(nn.Cell):
    """Returns its input as logits: the loss of each sample is set by the data alone."""

    def construct(self, x):
        return x


def _data(size: int, batch: int, *, drop: bool = False) -> ds.Dataset:
    logits = np.zeros((size, 2), np.float32)
    logits[-1] = [20.0, -20.0]  # the last sample: confidently wrong, a loss of 40
    labels = np.zeros(size, np.int32)
    labels[-1] = 1
    return ds.NumpySlicesDataset({"x": logits, "y": labels}, shuffle=False).batch(batch, drop_remainder=drop)


def test_the_mean_is_over_samples_not_over_batches():
    loss = validate(Fixed(), nn.CrossEntropyLoss(), _data(65, 64)).loss
    per_sample = (64 * np.log(2) + 40.0) / 65  # 64 samples at ln 2, the last at 40
    assert loss == pytest.approx(per_sample, rel=1e-5)
    assert loss < (np.log(2) + 40.0) / 2 / 10  # the mean of the two batch means is ten times more


@pytest.mark.parametrize(
    ("size", "batch", "drop", "even"), [(64, 16, False, True), (65, 64, False, False), (65, 64, True, True)]
)
def test_even_batches_are_told_from_a_short_last_one(size, batch, drop, even):
    assert even_batches(_data(size, batch, drop=drop)) is even
    assert even_batches(_data(size, batch, drop=drop).map(lambda x: x, input_columns="x")) is even


def test_model_fit_records_the_loss_per_sample_where_its_metric_averages_batches():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    net = nn.SequentialCell([nn.Dense(2, 2)])
    net[0].weight.set_data(ms.Tensor(np.eye(2, dtype=np.float32)))
    net[0].bias.set_data(ms.Tensor(np.zeros(2, np.float32)))
    loss_fn = nn.CrossEntropyLoss()
    model = ms.train.Model(net, loss_fn, nn.SGD(net.trainable_params(), 0.0), metrics={"loss"})
    watch = graphaudit.Watch(fail_on="never")
    model.fit(1, _data(65, 64), _data(65, 64), callbacks=[watch], dataset_sink_mode=False)
    recorded = watch.session.record.validation[-1][2]
    assert recorded == pytest.approx(validate(net, loss_fn, _data(65, 64)).loss, rel=1e-5)
