"""GA709 bad: torch.nn.BatchNorm2d(8, momentum=0.1) ported as is: 90% of the moving statistics from the last batch."""

from mindspore import nn

SUBJECT = "bn"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8, momentum=0.1)  # <- SARIF
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.relu(self.bn(self.conv(x)))


def build() -> dict:
    net = Net()
    return {"net": net, "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9)}
