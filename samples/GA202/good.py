"""GA202 good: the optimizer is built from the network it trains."""

from mindspore import nn


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Dense(4, 8)
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        return self.head(self.backbone(x))


def build() -> dict:
    net = Net()
    return {"net": net, "optimizer": nn.Adam(net.trainable_params(), learning_rate=1e-3)}
