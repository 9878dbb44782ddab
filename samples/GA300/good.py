"""GA300 good: every name of the design is a path of the network, so every rule is checked."""

from mindspore import nn

from graphaudit import Spec


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Dense(4, 8)
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        return self.head(self.encoder(x))


def build() -> dict:
    net = Net()
    for param in net.encoder.get_parameters():
        param.requires_grad = False
    return {
        "net": net,
        "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9),
        "spec": Spec(frozen=["encoder.*"], expected_connections=[("encoder", "head")]),
    }
