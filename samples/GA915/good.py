"""GA915 good: the same peak of 1e-2, warmed up linearly over 50 steps, then cosine decay."""

import math

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
    lr = [
        1e-2 * (step + 1) / 50 if step < 50 else 1e-2 * 0.5 * (1 + math.cos(math.pi * (step - 50) / 950))
        for step in range(1000)
    ]
    return {"net": net, "optimizer": nn.AdamWeightDecay(net.trainable_params(), learning_rate=lr)}
