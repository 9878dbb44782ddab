"""GA601 bad: a hidden layer initialised with zeros."""

from mindspore import nn

SUBJECT = "hidden.weight"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Dense(16, 32)
        self.hidden = nn.Dense(32, 32, weight_init="zeros")
        self.head = nn.Dense(32, 4)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.head(self.relu(self.hidden(self.relu(self.embed(x)))))


def build() -> dict:
    net = Net()
    return {"net": net, "optimizer": nn.Adam(net.trainable_params(), 1e-3)}
