"""GA502 bad: set_train(False) on the backbone only, left over from a feature-extraction run."""

from mindspore import nn

SUBJECT = "backbone"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.SequentialCell([nn.Dense(4, 8), nn.BatchNorm1d(8), nn.ReLU()])
        self.head = nn.SequentialCell([nn.Dropout(p=0.1), nn.Dense(8, 2)])

    def construct(self, x):
        return self.head(self.backbone(x))


def build() -> dict:
    net = Net()
    net.set_train(True)
    net.backbone.set_train(False)
    return {"net": net, "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9), "mode": "train"}
