"""GA914 good: the same decay with nn.polynomial_decay_lr, ending at 1e-5."""

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
    lr = nn.polynomial_decay_lr(0.1, 1e-5, total_step=200, step_per_epoch=10, decay_epoch=20, power=1.0)
    return {"net": net, "optimizer": nn.Momentum(net.trainable_params(), lr, 0.9)}
