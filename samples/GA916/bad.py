"""GA916 bad: PolynomialDecayLR with its start and end rates swapped: it rises from 1e-5 to 0.1."""

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
    lr = nn.PolynomialDecayLR(learning_rate=1e-5, end_learning_rate=0.1, decay_steps=1000, power=1.0)
    return {"net": net, "optimizer": nn.Momentum(net.trainable_params(), lr, 0.9)}  # <- SARIF
