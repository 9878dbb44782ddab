"""GA501 good: set_train(False) before inference puts BatchNorm and Dropout in inference mode."""

from mindspore import nn


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.SequentialCell([nn.Dense(4, 8), nn.BatchNorm1d(8), nn.ReLU()])
        self.drop = nn.Dropout(p=0.2)
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        return self.head(self.drop(self.features(x)))


def build() -> dict:
    net = Net()
    net.set_train(False)
    return {"net": net, "mode": "eval"}
