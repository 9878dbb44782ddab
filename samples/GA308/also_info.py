"""GA308 info: a linear regression written as two Dense layers, with no activation anywhere.

fc1 feeds fc2 directly, so the two compute one linear map. The whole network applies no
element-wise activation at all, so it is plainly meant to be linear (a low-rank factorisation
of the map, say): the two layers are redundant rather than a forgotten ReLU, hence info.
"""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "fc2"


class Linear(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Dense(20, 8)
        self.fc2 = nn.Dense(8, 1)

    def construct(self, x):
        return self.fc2(self.fc1(x))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Linear()
    x = Tensor(rng.standard_normal((8, 20)).astype(np.float32))
    y = Tensor(rng.standard_normal((8, 1)).astype(np.float32))
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.MSELoss(),
    }
