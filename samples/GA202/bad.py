"""GA202 bad: the optimizer is built from a second instance of the network."""

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
    optimizer = nn.Adam(Net().trainable_params(), learning_rate=1e-3)  # <- SARIF
    net = Net()  # re-created after the optimizer
    return {"net": net, "optimizer": optimizer}
