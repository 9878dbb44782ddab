"""GA950 good: the same outlier batch through a softplus written not to overflow: the loss stays finite."""

import mindspore as ms
import numpy as np
from mindspore import nn, ops

import graphaudit


class StableSoftplus(nn.Cell):
    def construct(self, x):
        return ops.relu(x) + ops.log(1 + ops.exp(-ops.abs(x)))  # exp of a value <= 0 cannot overflow


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(8, 16)
        self.softplus = StableSoftplus()
        self.head = nn.Dense(16, 4)

    def construct(self, x):
        return self.head(self.softplus(self.fc(x)))


def data(outlier: float) -> ms.dataset.Dataset:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((80, 8)).astype(np.float32)
    y = (x[:, :4]).argmax(1).astype(np.int32)
    x[40:48] *= outlier
    return ms.dataset.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(8)


def build() -> dict:
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(0)
    net = Net()
    optimizer = nn.SGD(net.trainable_params(), learning_rate=0.1)
    model = ms.train.Model(net, nn.CrossEntropyLoss(), optimizer)
    watch = graphaudit.Watch(fail_on="never")
    model.train(1, data(100.0), callbacks=[watch], dataset_sink_mode=False)
    return {"net": net, "optimizer": optimizer, "watched": watch.record}
