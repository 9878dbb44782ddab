"""GA201 bad: the optimizer is built from the backbone only; the head never trains."""

from mindspore import nn

SUBJECT = "head.weight"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Dense(4, 8)
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        return self.head(self.backbone(x))


def build() -> dict:
    net = Net()
    return {"net": net, "optimizer": nn.Momentum(net.backbone.trainable_params(), 0.01, 0.9)}  # <- SARIF
