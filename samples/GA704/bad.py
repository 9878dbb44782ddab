"""GA704 bad: ``requires_grads`` set on a Cell freezes nothing."""

from mindspore import nn

SUBJECT = "backbone"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.SequentialCell([nn.Dense(4, 8), nn.ReLU()])  # <- SARIF
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        return self.head(self.backbone(x))


def build() -> dict:
    net = Net()
    net.backbone.requires_grads = False  # meant: freeze the backbone
    net.set_train(True)
    return {"net": net, "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9)}
