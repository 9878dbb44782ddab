"""GA501 bad: audited for inference, but one BatchNorm was built to always use batch statistics."""

from mindspore import nn

SUBJECT = "features.1"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.SequentialCell(  # <- SARIF
            [nn.Dense(4, 8), nn.BatchNorm1d(8, use_batch_statistics=True), nn.ReLU()]  # ported "train BN"
        )
        self.drop = nn.Dropout(p=0.2)
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        return self.head(self.drop(self.features(x)))


def build() -> dict:
    net = Net()
    net.set_train(False)  # ready for inference...
    return {"net": net, "mode": "eval"}  # ...but features.1 still normalises with each batch's statistics
