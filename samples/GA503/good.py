"""GA503 good: a deliberately frozen BatchNorm (pretrained statistics, gamma and beta frozen)."""

from mindspore import nn


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8, use_batch_statistics=False)
        self.relu = nn.ReLU()
        self.bn2 = nn.BatchNorm2d(8)

    def construct(self, x):
        return self.bn2(self.relu(self.bn(self.conv(x))))


def build() -> dict:
    net = Net()
    for p in net.bn.get_parameters():
        p.requires_grad = False
    net.set_train(True)
    return {"net": net, "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9), "mode": "train"}
