"""GA203 warning: a frozen backbone passed, without weight decay, to the optimizer anyway.

The backbone's parameters have requires_grad=False but the optimizer was built from
net.get_parameters(). Without weight decay they do not move now, so nothing is damaged yet; but
the optimizer keeps state for them and any decay or group change would move them: a warning.
"""

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
    return {"net": net, "optimizer": nn.Momentum(net.get_parameters(), 0.01, 0.9)}
