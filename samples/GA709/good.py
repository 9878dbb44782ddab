"""GA709 good: MindSpore's meaning: momentum=0.9 keeps 90% of the running statistics."""

from mindspore import nn


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8, momentum=0.9)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.relu(self.bn(self.conv(x)))


def build() -> dict:
    net = Net()
    return {"net": net, "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9)}
