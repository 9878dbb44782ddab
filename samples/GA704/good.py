"""GA704 good: a custom flag that construct reads is not a misspelling; freezing done on parameters."""

from mindspore import nn


class Block(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(8, 8)
        self.is_training = True  # this cell's own switch, read below

    def construct(self, x):
        return self.fc(x) * 2 if self.is_training else self.fc(x)


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.SequentialCell([nn.Dense(4, 8), nn.ReLU()])
        self.block = Block()
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        return self.head(self.block(self.backbone(x)))


def build() -> dict:
    net = Net()
    for p in net.backbone.get_parameters():
        p.requires_grad = False
    net.set_train(True)
    return {"net": net, "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9)}
