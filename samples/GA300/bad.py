"""GA300 bad: the design expects "encodr" (misspelt) to feed the head.

The rule checks nothing, so the audit would pass whatever the wiring is; GA300 reports the
name once, with the names that look like it.
"""

from mindspore import nn

from graphaudit import Spec

SUBJECT = "encodr"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Dense(4, 8)
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        return self.head(self.encoder(x))


def build() -> dict:
    net = Net()  # <- SARIF
    for param in net.encoder.get_parameters():
        param.requires_grad = False
    return {
        "net": net,
        "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9),
        "spec": Spec(frozen=["encoder.*"], expected_connections=[("encodr", "head")]),
    }
