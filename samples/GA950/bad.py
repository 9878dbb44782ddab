"""GA950 bad: a hand-written softplus, log(1 + exp(x)), overflows on an outlier batch (Model.train).

The sixth batch holds inputs 100x larger than the rest: ``exp`` of the layer's input is Inf
there, so the loss is NaN at step 6. The watch (default sampling: step 6 is not sampled) keeps
the weights of that step before its update and re-runs its batch: the first layer whose
output is not finite is ``softplus``.
"""

import mindspore as ms
import numpy as np
from mindspore import nn, ops

import graphaudit

SUBJECT = "softplus"


class NaiveSoftplus(nn.Cell):
    def construct(self, x):
        return ops.log(1 + ops.exp(x))  # exp overflows float32 above 88


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(8, 16)
        self.softplus = NaiveSoftplus()  # <- SARIF
        self.head = nn.Dense(16, 4)

    def construct(self, x):
        return self.head(self.softplus(self.fc(x)))


def data(outlier: float) -> ms.dataset.Dataset:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((80, 8)).astype(np.float32)
    y = (x[:, :4]).argmax(1).astype(np.int32)
    x[40:48] *= outlier  # the sixth batch of 8
    return ms.dataset.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(8)


def build(outlier: float = 100.0) -> dict:
    ms.set_context(mode=ms.PYNATIVE_MODE)  # where Watch sees the step before its update
    ms.set_seed(0)
    net = Net()
    optimizer = nn.SGD(net.trainable_params(), learning_rate=0.1)
    model = ms.train.Model(net, nn.CrossEntropyLoss(), optimizer)
    watch = graphaudit.Watch(fail_on="never")
    model.train(1, data(outlier), callbacks=[watch], dataset_sink_mode=False)
    return {"net": net, "optimizer": optimizer, "watched": watch.record}
