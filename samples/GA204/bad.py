"""GA204 bad: ``require_grad`` (no s) is accepted silently and freezes nothing."""

from mindspore import nn

SUBJECT = "backbone"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Dense(4, 8)  # <- SARIF
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        return self.head(self.backbone(x))


def build() -> dict:
    net = Net()
    for p in net.backbone.get_parameters():
        p.require_grad = False  # typo
    return {"net": net, "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9)}
