"""GA806 bad: two data-parallel ranks (a real msrun job), 4 samples each per step, into a plain BatchNorm.

``rank_worker`` runs on both ranks of one ``msrun`` job (:mod:`graphaudit.distributed.jobs`):
each sets the data-parallel context (gradients averaged), audits collectively (its report is
kept for the tests) and writes its fingerprint, which carries its setup and its pipeline's
batch size. ``build()`` audits rank 0's network with rank 1's file as its peer.
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

GRADIENTS_MEAN = True
SLOW = True  # its audit runs a real two-rank msrun job
SUBJECT = "1"
PER_RANK_BATCH = 4  # a global batch of 8, but each BatchNorm sees 4


def network() -> tuple[nn.Cell, nn.Optimizer]:
    ms.set_seed(0)  # the same initial weights on every rank
    net = nn.SequentialCell([nn.Dense(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dense(16, 4)])
    return net, nn.Momentum(net.trainable_params(), 0.01, 0.9)


def dataset(rank: int) -> ds.Dataset:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((512, 8)).astype(np.float32)
    y = (x @ rng.standard_normal((8, 4))).argmax(1).astype(np.int32)
    return ds.NumpySlicesDataset({"x": x, "label": y}, shuffle=True, num_shards=2, shard_id=rank).batch(
        PER_RANK_BATCH
    )


def rank_worker(out: Path) -> None:
    """One rank: the data-parallel context, a collective audit, the fingerprint file."""
    from mindspore.communication import get_group_size, get_rank

    rank = get_rank()
    ms.set_auto_parallel_context(
        parallel_mode=ms.ParallelMode.DATA_PARALLEL,
        gradients_mean=GRADIENTS_MEAN,
        device_num=get_group_size(),
    )
    net, optimizer = network()  # <- SARIF
    data = dataset(rank)
    report = graphaudit.audit(net, optimizer, dataset=data)
    found = [[f.check_id, f.subject, f.severity] for f in report.findings]
    (out / f"report{rank}.json").write_text(json.dumps(found))
    fingerprint(net, dataset=data).save(out / f"rank{rank}.json")


def build() -> dict:
    net, optimizer = network()  # <- SARIF
    return {
        "net": net,
        "optimizer": optimizer,
        "dataset": dataset(0),
        "peers": [sample_folder(__file__) / "rank1.json"],
    }
