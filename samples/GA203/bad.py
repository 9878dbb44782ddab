"""GA203 bad: a frozen backbone passed to an optimizer with weight decay still decays."""

from mindspore import nn

SUBJECT = "backbone.weight"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Dense(4, 8)
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        return self.head(self.backbone(x))


def build() -> dict:
    net = Net()
    for p in net.backbone.get_parameters():
        p.requires_grad = False
    optimizer = nn.Momentum(net.get_parameters(), 0.01, 0.9, weight_decay=1e-4)  # <- SARIF
    return {"net": net, "optimizer": optimizer}
