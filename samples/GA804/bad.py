"""GA804 bad: each rank sets its own dataset seed (1234 + rank) before sharding a shuffled source: the shards overlap.

``rank_worker`` runs on both ranks of a real ``msrun`` job (:mod:`graphaudit.distributed.jobs`):
each rank builds its training pipeline and the same small MLP (``ms.set_seed(0)``), saves its
fingerprint with the pipeline's facts (``fingerprint(net, dataset=ds)``) and runs the real
collective audit (``graphaudit.audit(net, optimizer, dataset=ds)``), whose findings it writes
to ``report<rank>.json``. ``build()`` builds rank 0's network and pipeline in the test process
and gives rank 1's file as ``peers=``.
"""

import json
from pathlib import Path

import mindspore as ms
import mindspore.dataset as ds
import numpy as np
from mindspore import nn

import graphaudit
from graphaudit.distributed.jobs import sample_folder
from graphaudit.fingerprint import fingerprint

SLOW = True  # its audit runs a real two-rank msrun job
SUBJECT = "train/NumpySlicesDataset#1"

ROWS = 256


def network() -> tuple[nn.Cell, nn.Optimizer]:
    ms.set_seed(0)  # the same initial weights on every rank
    net = nn.SequentialCell(nn.Dense(8, 16), nn.ReLU(), nn.Dense(16, 2))
    return net, nn.SGD(net.trainable_params(), learning_rate=0.01)


def columns(rank: int, world: int) -> dict[str, np.ndarray]:
    """The rows the rank's pipeline reads."""
    rng = np.random.default_rng(0)  # the same data set on every rank
    x = rng.standard_normal((ROWS, 8)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int32)
    return {"x": x, "y": y}


def rank_worker(out: Path) -> None:
    """One rank of the job (communication initialised by the job)."""
    from mindspore.communication import get_group_size, get_rank

    rank, world = get_rank(), get_group_size()
    net, optimizer = network()  # ms.set_seed(0) sets the dataset seed too: set it after
    ds.config.set_seed(1234 + rank)  # a different shuffle on every rank
    train = ds.NumpySlicesDataset(columns(rank, world), shuffle=True, num_shards=world, shard_id=rank).batch(
        16
    )
    fingerprint(net, dataset=train).save(out / f"rank{rank}.json")
    report = graphaudit.audit(net, optimizer, dataset=train)  # a collective: every rank audits
    found = [{"check_id": f.check_id, "severity": f.severity, "subject": f.subject} for f in report.findings]
    (out / f"report{rank}.json").write_text(json.dumps(found), encoding="utf-8")


def build() -> dict:
    folder = sample_folder(__file__)
    seed = ds.config.get_seed()
    ds.config.set_seed(1234)  # as rank 0 set it; its sampler keeps it
    try:
        # rank 0's pipeline
        train = ds.NumpySlicesDataset(columns(0, 2), shuffle=True, num_shards=2, shard_id=0).batch(16)  # <- SARIF
    finally:
        ds.config.set_seed(seed)
    net, optimizer = network()
    return {"net": net, "optimizer": optimizer, "dataset": train, "peers": [folder / "rank1.json"]}
