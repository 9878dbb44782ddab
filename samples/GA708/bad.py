"""GA708 bad: a network made float16 by hand (net.to_float) feeds float16 logits to the loss, computed in float16."""

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.norm = nn.LayerNorm((8,))
        self.head = nn.Dense(8, 4)

    def construct(self, x):
        h = self.pool(ops.relu(self.bn(self.conv(x)))).reshape(x.shape[0], -1)
        return self.head(self.norm(h))


def batch() -> tuple:
    x = Tensor(np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32))
    return x, Tensor(np.array([1, 3], np.int32))


SUBJECT = "CrossEntropyLoss"


def build() -> dict:
    x, y = batch()
    net = Net().to_float(ms.float16)
    optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)
    return {"net": net, "optimizer": optimizer, "inputs": x, "label": y, "loss_fn": nn.CrossEntropyLoss()}  # <- SARIF
