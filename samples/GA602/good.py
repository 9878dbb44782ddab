"""GA602 good: random weights; constants only for biases and normalisation parameters."""

from mindspore import nn
from mindspore.common.initializer import Constant, Normal


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Dense(16, 32, weight_init=Normal(0.01), bias_init=Constant(0.01))
        self.bn = nn.BatchNorm1d(32)
        self.fc2 = nn.Dense(32, 4)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.fc2(self.relu(self.bn(self.fc1(x))))


def build() -> dict:
    net = Net()
    return {"net": net, "optimizer": nn.SGD(net.trainable_params(), 0.1)}
