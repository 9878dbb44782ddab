"""GA403 good: the classifier returns logits; ops.cross_entropy applies the softmax."""

import numpy as np
from mindspore import Tensor, nn, ops


class SmoothedCrossEntropy(nn.Cell):
    def __init__(self, smoothing: float = 0.1) -> None:
        super().__init__()
        self.smoothing = smoothing

    def construct(self, logits, labels):
        return ops.cross_entropy(logits, labels, label_smoothing=self.smoothing)


class Classifier(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, pad_mode="same")
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Dense(8, 10)

    def construct(self, x):
        h = self.pool(ops.relu(self.conv(x))).reshape(x.shape[0], 8)
        return self.fc(h)


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Classifier()
    x = Tensor(rng.standard_normal((4, 3, 8, 8)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, (4,)).astype(np.int32))
    return {
        "net": nn.WithLossCell(net, SmoothedCrossEntropy()),
        "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9),
        "inputs": (x, y),
    }
