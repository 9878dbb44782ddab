"""GA403 bad: the classifier ends in a softmax, and the custom loss calls ops.cross_entropy."""

import numpy as np
from mindspore import Tensor, nn, ops

SUBJECT = "SmoothedCrossEntropy"


class SmoothedCrossEntropy(nn.Cell):
    """Label-smoothed cross-entropy written with the functional API."""

    def __init__(self, smoothing: float = 0.1) -> None:
        super().__init__()
        self.smoothing = smoothing

    def construct(self, logits, labels):
        return ops.cross_entropy(logits, labels, label_smoothing=self.smoothing)


class Classifier(nn.Cell):
    """Ten classes from 3x8x8 images; the softmax sits a few reshapes before the output."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, pad_mode="same")
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Dense(8, 10)
        self.softmax = nn.Softmax(axis=-1)  # <- SARIF

    def construct(self, x):
        h = self.pool(ops.relu(self.conv(x))).reshape(x.shape[0], 8)
        probs = self.softmax(self.fc(h))
        return probs.view(x.shape[0], 1, 10).squeeze(1)


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
