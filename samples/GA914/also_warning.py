"""GA914 warning: a linear decay to 0 written for 100 steps, clamped at 0, for a 200-step schedule.

The decay was sized for half the training (or the negative rates were "fixed" with max(0, ...)):
from step 100 the rate is 0, so half the training steps change nothing. No rate is negative or
NaN (which would damage the weights, the error); the steps are only wasted: a warning.
"""

from mindspore import nn


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(16, 32)
        self.relu = nn.ReLU()
        self.head = nn.Dense(32, 4)

    def construct(self, x):
        return self.head(self.relu(self.fc(x)))


SUBJECT = "(root)"


def build() -> dict:
    net = Net()
    lr = [max(0.0, 0.1 - 0.001 * step) for step in range(200)]
    return {"net": net, "optimizer": nn.Momentum(net.trainable_params(), lr, 0.9)}
