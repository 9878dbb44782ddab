"""GA702 bad: the rate given as the deprecated ``keep_prob``, in every block."""

from mindspore import nn

SUBJECT = "blocks.0.drop"


class Block(nn.Cell):
    def __init__(self, features: int) -> None:
        super().__init__()
        self.fc = nn.Dense(features, 32)
        self.drop = nn.Dropout(keep_prob=0.9)  # <- SARIF

    def construct(self, x):
        return self.drop(self.fc(x))


class Net(nn.Cell):
    def __init__(self, width: int = 1) -> None:
        super().__init__()
        self.blocks = nn.SequentialCell([Block(16 if i == 0 else 32) for i in range(width)])
        self.head = nn.Dense(32, 4)

    def construct(self, x):
        return self.head(self.blocks(x))


def build(width: int = 1) -> dict:
    """*width*: how many blocks (tests/test_widened_samples.py widens it)."""
    net = Net(width)
    net.set_train(True)
    return {"net": net, "optimizer": nn.Adam(net.trainable_params(), 1e-3)}
