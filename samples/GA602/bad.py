"""GA602 bad: a constant initialiser meant for a bias used for the weights."""

from mindspore import nn
from mindspore.common.initializer import Constant

SUBJECT = "fc1.weight"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Dense(16, 32, weight_init=Constant(0.01))
        self.fc2 = nn.Dense(32, 4)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.fc2(self.relu(self.fc1(x)))


def build() -> dict:
    net = Net()
    return {"net": net, "optimizer": nn.SGD(net.trainable_params(), 0.1)}
