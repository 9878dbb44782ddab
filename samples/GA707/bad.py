"""GA707 bad: amp_level O3 computes BatchNorm and LayerNorm in float16."""

import numpy as np
from mindspore import Tensor, amp, nn, ops


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)  # <- SARIF
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.norm = nn.LayerNorm((8,))
        self.head = nn.Dense(8, 4)

    def construct(self, x):
        h = self.pool(ops.relu(self.bn(self.conv(x)))).reshape(x.shape[0], -1)
        return self.head(self.norm(h))


def batch() -> tuple:
    x = Tensor(np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32))
    return x, Tensor(np.array([1, 3], np.int32))


SUBJECT = "(root)"


def build() -> dict:
    x, y = batch()
    net = amp.auto_mixed_precision(Net(), "O3")
    optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)
    return {"net": net, "optimizer": optimizer, "inputs": x, "label": y, "loss_fn": nn.CrossEntropyLoss()}
