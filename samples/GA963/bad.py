"""GA963 bad: two data-parallel ranks (a real msrun job) that both read the whole, unsharded data.

``rank_worker`` runs on both ranks of a real ``msrun`` job (:mod:`graphaudit.distributed.jobs`):
each rank trains a small MLP, the gradients averaged across the ranks, watched by
``graphaudit.watch()``, which all-gathers the ranks' losses at every sampled step. Neither
rank takes its shard: both read the same batches, compute the same loss at every step, and
the job trains one model on half the data at twice the cost. Rank 0 saves its watch's
record; ``build()`` returns it.
"""

import pickle
from pathlib import Path

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

import graphaudit
from graphaudit.distributed.jobs import sample_folder

SLOW = True  # its audit runs a real two-rank msrun job
SUBJECT = "(root)"
SHARDED = False
STEPS = 8


def network() -> tuple[nn.Cell, nn.Optimizer]:
    ms.set_seed(0)  # the same initial weights on every rank
    net = nn.SequentialCell([nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 4)])
    return net, nn.SGD(net.trainable_params(), learning_rate=0.1)


def rank_worker(out: Path) -> None:
    """One rank of the job (communication initialised by the job)."""
    from mindspore.communication import get_group_size, get_rank

    rank, world = get_rank(), get_group_size()
    net, optimizer = network()  # <- SARIF
    loss_fn = nn.CrossEntropyLoss()

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)
    reduce = nn.DistributedGradReducer(optimizer.parameters, mean=True, degree=world)
    x = np.random.default_rng(0).standard_normal((STEPS * 32, 16)).astype(np.float32)
    y = (x @ np.random.default_rng(1).standard_normal((16, 4))).argmax(1).astype(np.int32)
    if SHARDED:
        x, y = x[rank::world], y[rank::world]  # each rank its own half
    with graphaudit.watch(net, optimizer, every=1, fail_on="never", batch_size=16) as watch:
        for step in range(STEPS):
            batch = slice(step * 16, step * 16 + 16)
            loss, grads = grad_fn(Tensor(x[batch]), Tensor(y[batch]))
            grads = reduce(grads)
            optimizer(grads)
            watch.step(loss=loss, grads=grads)
    if rank == 0:
        (out / "record.pkl").write_bytes(pickle.dumps(watch.record))


def build() -> dict:
    record = pickle.loads((sample_folder(__file__) / "record.pkl").read_bytes())
    net, optimizer = network()  # <- SARIF
    return {"net": net, "optimizer": optimizer, "watched": record}
