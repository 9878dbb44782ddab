"""GA201 good: a backbone frozen on purpose by leaving it out, as the design declares."""

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
    return {
        "net": net,
        "optimizer": nn.Momentum(net.head.trainable_params(), 0.01, 0.9),
        "spec": Spec(frozen=["backbone.*"]),
    }
