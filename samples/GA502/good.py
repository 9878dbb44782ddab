"""GA502 good: the whole network in one mode; a branch without mode-dependent cells may differ."""

from mindspore import nn


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.SequentialCell([nn.Dense(4, 8), nn.BatchNorm1d(8), nn.ReLU()])
        self.head = nn.SequentialCell([nn.Dropout(p=0.1), nn.Dense(8, 2)])
        self.projector = nn.SequentialCell([nn.Dense(8, 8), nn.ReLU()])  # behaves the same in both modes

    def construct(self, x):
        h = self.backbone(x)
        return self.head(h + self.projector(h))


def build() -> dict:
    net = Net()
    net.set_train(True)
    net.projector.set_train(False)  # harmless: nothing in it depends on the mode
    return {"net": net, "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9), "mode": "train"}
