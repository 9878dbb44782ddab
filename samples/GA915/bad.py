"""GA915 bad: AdamWeightDecay at a fixed 1e-2, no warm-up."""

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
    return {"net": net, "optimizer": nn.AdamWeightDecay(net.trainable_params(), learning_rate=1e-2)}  # <- SARIF
