"""GA916 good: PolynomialDecayLR from 0.1 down to 1e-5."""

from mindspore import nn


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(16, 32)
        self.relu = nn.ReLU()
        self.head = nn.Dense(32, 4)

    def construct(self, x):
        return self.head(self.relu(self.fc(x)))


def build() -> dict:
    net = Net()
    lr = nn.PolynomialDecayLR(learning_rate=0.1, end_learning_rate=1e-5, decay_steps=1000, power=1.0)
    return {"net": net, "optimizer": nn.Momentum(net.trainable_params(), lr, 0.9)}
