"""GA503 bad: BatchNorms built with use_batch_statistics=False never normalise with the batch."""

from mindspore import nn

SUBJECT = "blocks.0.bn"


class Block(nn.Cell):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels, 8, 3)
        self.bn = nn.BatchNorm2d(8, use_batch_statistics=False)  # <- SARIF
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.relu(self.bn(self.conv(x)))


class Net(nn.Cell):
    def __init__(self, width: int = 1) -> None:
        super().__init__()
        self.blocks = nn.SequentialCell([Block(3 if i == 0 else 8) for i in range(width)])

    def construct(self, x):
        return self.blocks(x)


def build(width: int = 1) -> dict:
    """*width*: how many blocks build their BatchNorm so (tests/test_widened_samples.py widens it)."""
    net = Net(width)
    net.set_train(True)
    return {"net": net, "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9), "mode": "train"}
