"""GA964 bad: two data-parallel ranks (a real msrun job); rank 1's labels are permuted, no longer its inputs'.

``rank_worker`` runs on both ranks of a real ``msrun`` job (:mod:`graphaudit.distributed.jobs`):
each rank trains a small MLP on its own half of the data, the gradients averaged across the
ranks, watched by ``graphaudit.watch()``, which all-gathers the ranks' losses at every sampled
step. Rank 1 shuffles its labels: the averaged model learns rank 0's data, and rank 1's loss
stays high while rank 0's falls. Rank 0 saves its watch's record; ``build()`` returns it.
"""

import pickle
from pathlib import Path

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

import graphaudit
from graphaudit.distributed.jobs import sample_folder

SLOW = True  # its audit runs a real two-rank msrun job
SUBJECT = "rank 1"
CORRUPT = True
STEPS = 16


def network() -> tuple[nn.Cell, nn.Optimizer]:
    ms.set_seed(3)  # the same initial weights on every rank
    net = nn.SequentialCell([nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 4)])
    return net, nn.Momentum(net.trainable_params(), learning_rate=0.3, momentum=0.9)


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
    x = np.random.default_rng(3).standard_normal((STEPS * 32, 16)).astype(np.float32)
    y = (x @ np.random.default_rng(103).standard_normal((16, 4))).argmax(1).astype(np.int32)
    x, y = x[rank::world], y[rank::world]  # each rank its own half
    if CORRUPT and rank == 1:
        y = np.random.default_rng(7).permutation(y)  # the labels no longer belong to their inputs
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
