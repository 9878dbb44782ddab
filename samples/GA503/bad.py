"""GA503 bad: a BatchNorm built with use_batch_statistics=False never normalises with the batch."""

from mindspore import nn

SUBJECT = "bn"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8, use_batch_statistics=False)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.relu(self.bn(self.conv(x)))


def build() -> dict:
    net = Net()
    net.set_train(True)
    return {"net": net, "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9), "mode": "train"}
