"""GA101 bad: ``[block] * 3`` puts one block object in three slots."""

from mindspore import nn

SUBJECT = "body.0"


class Classifier(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Dense(4, 8)
        block = nn.SequentialCell([nn.Dense(8, 8), nn.ReLU()])
        self.body = nn.SequentialCell([block] * 3)  # <- SARIF
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        return self.head(self.body(self.stem(x)))


def build() -> dict:
    net = Classifier()
    return {"net": net, "optimizer": nn.SGD(net.trainable_params())}
