"""GA603 good: one fresh layer per slot; a frozen momentum copy (MoCo/BYOL target) may be identical."""

import copy

from mindspore import nn


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.CellList([nn.Dense(16, 16) for _ in range(3)])
        self.head = nn.Dense(16, 2)
        self.target_head = copy.deepcopy(self.head)  # updated by momentum, not by gradients
        for p in self.target_head.get_parameters():
            p.requires_grad = False

    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x) - self.target_head(x)


def build() -> dict:
    net = Net()
    return {"net": net, "optimizer": nn.Adam(net.trainable_params(), 1e-3)}
