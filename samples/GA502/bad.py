"""GA502 bad: set_train(False) on the backbone only, left over from a feature-extraction run.

The backbone's noise layer (a regulariser that reads ``self.training``) stops adding noise while
the head's Dropout drops: the branch runs in another mode than the rest. (With a BatchNorm in
the backbone, GA501 reports it, and this finding joins GA501's.)
"""

from mindspore import nn, ops

SUBJECT = "backbone"


class GaussianNoise(nn.Cell):
    """Adds Gaussian noise in training only."""

    def __init__(self, std: float = 0.1) -> None:
        super().__init__()
        self.std = std

    def construct(self, x):
        if self.training:
            return x + self.std * ops.randn_like(x)
        return x


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.SequentialCell([nn.Dense(4, 8), GaussianNoise(), nn.ReLU()])  # <- SARIF
        self.head = nn.SequentialCell([nn.Dropout(p=0.1), nn.Dense(8, 2)])

    def construct(self, x):
        return self.head(self.backbone(x))


def build() -> dict:
    net = Net()
    net.set_train(True)
    net.backbone.set_train(False)
    return {"net": net, "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9), "mode": "train"}
