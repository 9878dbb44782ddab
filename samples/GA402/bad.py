"""GA402 bad: a multi-label tagger outputs raw logits, but is trained with BCELoss."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "BCELoss"


class Tagger(nn.Cell):
    """Five independent tags per 2x8x8 patch."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.SequentialCell(
            [nn.Conv2d(2, 4, 3, pad_mode="same"), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten()]
        )
        self.head = nn.Dense(4 * 8 * 8, 5)  # <- SARIF
        self.drop = nn.Dropout(p=0.2)

    def construct(self, x):
        return self.drop(self.head(self.features(x)))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Tagger()
    x = Tensor(rng.standard_normal((4, 2, 8, 8)).astype(np.float32))
    return {
        "net": net,
        "optimizer": nn.SGD(net.trainable_params(), 0.01),
        "loss_fn": nn.BCELoss(reduction="mean"),
        "inputs": x,
    }
