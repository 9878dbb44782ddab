"""GA701 good: the drop rate written as ``p``."""

from mindspore import nn


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(16, 32)
        self.relu = nn.ReLU()
        self.drop = nn.Dropout(p=0.1)
        self.drop2d = nn.Dropout2d(p=0.2)
        self.head = nn.Dense(32, 4)

    def construct(self, x):
        return self.head(self.drop(self.relu(self.fc(x))))


def build() -> dict:
    net = Net()
    net.set_train(True)
    return {"net": net, "optimizer": nn.Adam(net.trainable_params(), 1e-3)}
