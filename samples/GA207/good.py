"""GA207 good: the training step differentiates the optimizer's own parameters."""

from mindspore import nn


def build() -> dict:
    net = nn.SequentialCell([nn.Dense(4, 4), nn.Dense(4, 4)])
    optimizer = nn.SGD(net.trainable_params(), 0.1)
    return {"net": net, "optimizer": optimizer, "grad_weights": optimizer.parameters}
