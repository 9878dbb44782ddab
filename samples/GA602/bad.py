"""GA602 bad: a constant initialiser meant for a bias used for the weights of every hidden layer."""

from mindspore import nn
from mindspore.common.initializer import Constant

SUBJECT = "fc1.0.weight"


class Net(nn.Cell):
    def __init__(self, width: int = 1) -> None:
        super().__init__()
        self.fc1 = nn.CellList([nn.Dense(16, 16, weight_init=Constant(0.01)) for _ in range(width)])  # <- SARIF
        self.fc2 = nn.Dense(16, 4)
        self.relu = nn.ReLU()

    def construct(self, x):
        for layer in self.fc1:
            x = self.relu(layer(x))
        return self.fc2(x)


def build(width: int = 1) -> dict:
    """*width*: how many layers the constant initialiser builds (tests/test_widened_samples.py widens it)."""
    net = Net(width)
    return {"net": net, "optimizer": nn.SGD(net.trainable_params(), 0.1)}
