"""GA914 bad: a hand-written linear decay that goes negative after step 100."""

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
    lr = [0.1 - 0.001 * step for step in range(200)]
    return {"net": net, "optimizer": nn.Momentum(net.trainable_params(), lr, 0.9)}  # <- SARIF
