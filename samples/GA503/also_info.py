"""GA503 info: a detection backbone's frozen BatchNorm: use_batch_statistics=False and gamma/beta frozen.

Fine-tuning a detector on small batches, the pretrained BatchNorm is kept as it is: it
normalises with its moving statistics (from the checkpoint) and its scale and shift do not
train. That is a frozen BatchNorm on purpose, the common recipe: info.
"""

from mindspore import nn

SUBJECT = "bn"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8, use_batch_statistics=False)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.relu(self.bn(self.conv(x)))


def build() -> dict:
    net = Net()
    for p in net.bn.get_parameters():
        p.requires_grad = False
    net.set_train(True)
    return {"net": net, "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9), "mode": "train"}
