"""GA801 warning: BatchNorm moving statistics that drifted apart across ranks (no SyncBatchNorm).

Every rank starts from the same weights (one seed for all), but each normalises its own shard
of the data: after training steps the BatchNorm's moving_mean and moving_variance differ from
rank to rank while every trainable weight still agrees. These have requires_grad=False and
legitimately drift without SyncBatchNorm; only the checkpoint saved by one rank sees its own
statistics. Worth knowing, not a broken run: a warning (a trainable weight that differs is the
error).

A single process cannot be two ranks, so this sample simulates the world as bad.py does: it
builds what rank 1 would hold after a forward pass in training mode on its shard, saves that
network's fingerprint to a file as rank 1 would (``fingerprint(net).save(...)``), and gives the
file to the audit as the other rank's (``audit(net, peers=[path])``).
"""

import tempfile
from pathlib import Path

import numpy as np
from mindspore import Tensor, nn

from graphaudit.fingerprint import Fingerprint, fingerprint

SUBJECT = "body.1.moving_mean"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        same = np.random.default_rng(42)  # seeded identically on every rank
        self.body = nn.SequentialCell(
            [
                nn.Dense(
                    4,
                    8,
                    weight_init=Tensor(same.normal(0, 0.5, (8, 4)).astype(np.float32)),
                    bias_init="zeros",
                ),
                nn.BatchNorm1d(8),
                nn.ReLU(),
            ]
        )
        self.head = nn.Dense(
            8, 2, weight_init=Tensor(same.normal(0, 0.5, (2, 8)).astype(np.float32)), bias_init="zeros"
        )

    def construct(self, x):
        return self.head(self.body(x))


def shard(rank: int) -> Tensor:
    """The batch this rank reads: each rank its own rows."""
    return Tensor(np.random.default_rng(100 + rank).standard_normal((16, 4)).astype(np.float32))


def after_a_step(rank: int) -> Net:
    """A rank's network after one forward pass in training mode: its BatchNorm updated its moving statistics."""
    net = Net()
    net.set_train(True)
    net(shard(rank))
    net.set_train(False)
    return net


def build() -> dict:
    net = after_a_step(rank=0)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rank1.json"
        fingerprint(after_a_step(rank=1), rank=1, world_size=2).save(path)  # what rank 1 writes
        peers = [Fingerprint.load(path)]
    return {"net": net, "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9), "peers": peers}
