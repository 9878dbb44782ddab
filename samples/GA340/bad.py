"""GA340 bad: a CNN flattened to (features, batch) and transposed: each row mixes the samples."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "(root)"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.SequentialCell(
            [nn.Conv2d(3, 8, 3, pad_mode="same"), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2, 2)]
        )
        self.head = nn.Dense(8 * 4 * 4, 10)

    def construct(self, x):
        h = self.features(x)
        return self.head(h.reshape(-1, h.shape[0]).T)  # meant h.reshape(h.shape[0], -1)


def build() -> dict:
    x = Tensor(np.random.default_rng(0).normal(size=(4, 3, 8, 8)).astype(np.float32))
    net = Net()  # <- SARIF
    net.set_train(True)  # the probe runs in inference mode: BatchNorm does not mix samples there
    return {"net": net, "inputs": x}
