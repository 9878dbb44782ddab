"""GA603 bad: a stack of layers made by deep-copying one initialised layer."""

import copy

from mindspore import nn

SUBJECT = "layers.1.weight"


class Net(nn.Cell):
    def __init__(self, width: int = 3) -> None:
        super().__init__()
        layer = nn.Dense(16, 16)
        self.layers = nn.CellList([copy.deepcopy(layer) for _ in range(width)])  # <- SARIF
        self.head = nn.Dense(16, 2)

    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def build(width: int = 3) -> dict:
    """*width*: how many copies (tests/test_widened_samples.py widens it)."""
    net = Net(width)
    return {"net": net, "optimizer": nn.Adam(net.trainable_params(), 1e-3)}
