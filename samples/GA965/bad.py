"""GA965 bad: a 4-layer ReLU MLP initialised from a standard normal (sigma=1, 5.7x He's): its first loss is huge."""

import mindspore as ms
import numpy as np
from mindspore import nn
from mindspore.common.initializer import Normal

import graphaudit

SUBJECT = "(root)"
SIGMA = 1.0  # He-normal's sigma for 64 inputs is sqrt(2 / 64) = 0.18


def network(sigma: float) -> nn.SequentialCell:
    layers = []
    for _ in range(3):
        layers += [nn.Dense(64, 64, weight_init=Normal(sigma)), nn.ReLU()]
    return nn.SequentialCell([*layers, nn.Dense(64, 10)])


def dataset() -> ms.dataset.Dataset:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 64)).astype(np.float32)
    y = (x @ np.random.default_rng(1).standard_normal((64, 10))).argmax(1).astype(np.int32)
    return ms.dataset.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(32)


def build() -> dict:
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(0)
    net = network(SIGMA)  # <- SARIF
    optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)
    model = ms.train.Model(net, nn.CrossEntropyLoss(), optimizer)
    watch = graphaudit.Watch(fail_on="never")
    model.train(1, dataset(), callbacks=[watch], dataset_sink_mode=False)
    return {"net": net, "optimizer": optimizer, "watched": watch.record}
