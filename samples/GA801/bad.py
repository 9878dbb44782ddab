"""GA801 bad: each rank draws the head's initial weights from a seed that depends on its rank.

A single process cannot be two ranks, so this sample simulates the world: it builds what
rank 1 would have built, saves that network's fingerprint to a file as rank 1 would
(``fingerprint(net).save(...)``), and gives the file to the audit as the other rank's
(``audit(net, peers=[path])``). Under ``msrun`` GA801 gathers the real fingerprints
with ``ops.AllGather`` instead (``tests/dist_worker.py``, ``docs/distributed.md``).
"""

import tempfile
from pathlib import Path

import numpy as np
from mindspore import Tensor, nn

from graphaudit.fingerprint import Fingerprint, fingerprint

SUBJECT = "head.weight"


class Net(nn.Cell):
    def __init__(self, rank: int) -> None:
        super().__init__()
        same = np.random.default_rng(42)  # the backbone is seeded identically on every rank...
        self.backbone = nn.Dense(
            4, 8, weight_init=Tensor(same.normal(0, 0.1, (8, 4)).astype(np.float32)), bias_init="zeros"
        )
        per_rank = np.random.default_rng(42 + rank)  # ...but the head with a rank-dependent seed
        self.head = nn.Dense(  # <- SARIF
            8, 2, weight_init=Tensor(per_rank.normal(0, 0.1, (2, 8)).astype(np.float32)), bias_init="zeros"
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
