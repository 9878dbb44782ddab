"""GA702 bad: the rate given as the deprecated ``keep_prob``."""

from mindspore import nn

SUBJECT = "drop"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(16, 32)
        self.drop = nn.Dropout(keep_prob=0.9)
        self.head = nn.Dense(32, 4)

    def construct(self, x):
        return self.head(self.drop(self.fc(x)))


def build() -> dict:
    net = Net()
    net.set_train(True)
    return {"net": net, "optimizer": nn.Adam(net.trainable_params(), 1e-3)}
