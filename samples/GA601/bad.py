"""GA601 bad: hidden layers initialised with zeros (one weight_init="zeros" in the layer factory)."""

from mindspore import nn

SUBJECT = "hidden.0.weight"


class Net(nn.Cell):
    def __init__(self, width: int = 1) -> None:
        super().__init__()
        self.embed = nn.Dense(16, 32)
        self.hidden = nn.CellList([nn.Dense(32, 32, weight_init="zeros") for _ in range(width)])  # <- SARIF
        self.head = nn.Dense(32, 4)
        self.relu = nn.ReLU()

    def construct(self, x):
        x = self.relu(self.embed(x))
        for layer in self.hidden:
            x = self.relu(layer(x))
        return self.head(x)


def build(width: int = 1) -> dict:
    """*width*: how many zero-initialised hidden layers (tests/test_widened_samples.py widens it)."""
    net = Net(width)
    return {"net": net, "optimizer": nn.Adam(net.trainable_params(), 1e-3)}
