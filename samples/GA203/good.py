"""GA203 good: the optimizer gets only the trainable parameters."""

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
    for p in net.backbone.get_parameters():
        p.requires_grad = False
    optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9, weight_decay=1e-4)
    return {"net": net, "optimizer": optimizer}
