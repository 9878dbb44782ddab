"""GA207 bad: the weights differentiated are the optimizer's, in another order (same shapes: silent)."""

from mindspore import nn

SUBJECT = "0.weight"


def build() -> dict:
    net = nn.SequentialCell([nn.Dense(4, 4), nn.Dense(4, 4)])
    optimizer = nn.SGD(net.trainable_params(), 0.1)  # <- SARIF
    weights = net[1].trainable_params() + net[0].trainable_params()  # head first: positions swapped
    return {"net": net, "optimizer": optimizer, "grad_weights": weights}
