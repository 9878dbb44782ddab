"""GA406 bad: a multi-label tagger whose head ends in a softmax, trained with BCELoss."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "BCELoss"


class Classifier(nn.Cell):
    """A 3-layer MLP over 20 features."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.body = nn.SequentialCell([nn.Dense(20, 64), nn.ReLU(), nn.Dense(64, 32), nn.ReLU()])
        self.head = nn.Dense(32, classes)

    def construct(self, x):
        return self.head(self.body(x))


class Tagger(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.scores = Classifier(classes=6)
        self.softmax = nn.Softmax(axis=-1)  # <- SARIF

    def construct(self, x):
        return self.softmax(self.scores(x))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Tagger()
    x = Tensor(rng.standard_normal((16, 20)).astype(np.float32))
    tags = (rng.random((16, 6)) < 0.3).astype(np.float32)  # several tags per sample
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (x,),
        "label": Tensor(tags),
        "loss_fn": nn.BCELoss(reduction="mean"),
    }
