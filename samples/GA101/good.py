"""GA101 good: three separate blocks; a stateless activation reused is fine."""

from mindspore import nn


class Classifier(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Dense(4, 8)
        act = nn.ReLU()
        self.body = nn.SequentialCell([nn.SequentialCell([nn.Dense(8, 8), act]) for _ in range(3)])
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        return self.head(self.body(self.stem(x)))


def build() -> dict:
    net = Classifier()
    return {"net": net, "optimizer": nn.SGD(net.trainable_params())}
