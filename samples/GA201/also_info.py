"""GA201 info: a backbone declared frozen (Spec(frozen=...)) and left out of the optimizer, still requires_grad.

The optimizer is built from the head only, which is the freeze the design declares: the
backbone will keep its pretrained weights, as meant. Nothing is wrong with the training, but
gradients are still computed for the backbone (requires_grad was never turned off): info.
"""

from mindspore import nn

from graphaudit import Spec

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
    return {
        "net": net,
        "optimizer": nn.Momentum(net.head.trainable_params(), 0.01, 0.9),
        "spec": Spec(frozen=["backbone.*"]),
    }
