"""GA205 good: the declared-frozen backbone has requires_grad=False and is left out."""

from mindspore import nn

from graphaudit import Spec


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
    return {
        "net": net,
        "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9),
        "spec": Spec(frozen=["backbone.*"]),
    }
