"""GA801 good: every rank builds the network from the same seed.

As in ``bad.py``, rank 1's fingerprint is written to a file and registered as the other
rank of the network audited; its weights are identical, so GA801 is silent.
"""

import tempfile
from pathlib import Path

import numpy as np
from mindspore import Tensor, nn

from graphaudit.fingerprint import Fingerprint, fingerprint


class Net(nn.Cell):
    def __init__(self, rank: int) -> None:
        super().__init__()
        same = np.random.default_rng(42)  # one seed for every rank (the rank only shards the data)
        self.backbone = nn.Dense(
            4, 8, weight_init=Tensor(same.normal(0, 0.1, (8, 4)).astype(np.float32)), bias_init="zeros"
        )
        self.head = nn.Dense(
            8, 2, weight_init=Tensor(same.normal(0, 0.1, (2, 8)).astype(np.float32)), bias_init="zeros"
        )

    def construct(self, x):
        return self.head(self.backbone(x))


def build() -> dict:
    net = Net(rank=0)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rank1.json"
        fingerprint(Net(rank=1), rank=1, world_size=2).save(path)  # what rank 1 writes
        peers = [Fingerprint.load(path)]
    return {"net": net, "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9), "peers": peers}
