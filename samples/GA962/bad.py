"""GA962 bad: two data-parallel ranks (a real msrun job) train on their own shards without averaging the gradients.

``rank_worker`` runs on both ranks of a real ``msrun`` job (:mod:`graphaudit.distributed.jobs`):
each rank trains a small MLP with a BatchNorm on its own half of the data, watched by
``graphaudit.watch()``, which all-gathers the ranks' weight fingerprints every few sampled
steps. Rank 0 saves its watch's record; ``build()`` returns it with a network built as every
rank built it. The BatchNorm's moving statistics differ across the ranks from the first step
(each normalises its own half; ``nn.SyncBatchNorm`` has no CPU kernel in MindSpore 2.10):
that is correct, and must not be reported.
"""

import pickle
from pathlib import Path

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

import graphaudit
from graphaudit.distributed.jobs import sample_folder

SLOW = True  # its audit runs a real two-rank msrun job
SUBJECT = "fc.bias"
AVERAGE_GRADIENTS = False


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(16, 32)  # <- SARIF
        self.norm = nn.BatchNorm1d(32)  # plain BatchNorm: its moving statistics differ per rank, rightly
        self.relu = nn.ReLU()
        self.head = nn.Dense(32, 4)

    def construct(self, x):
        return self.head(self.relu(self.norm(self.fc(x))))


def network() -> tuple[nn.Cell, nn.Optimizer]:
    ms.set_seed(0)  # the same initial weights on every rank
    net = Net()
    return net, nn.SGD(net.trainable_params(), learning_rate=0.1)


def rank_worker(out: Path) -> None:
    """One rank of the job (communication initialised by the job)."""
    from mindspore.communication import get_group_size, get_rank

    rank, world = get_rank(), get_group_size()
    net, optimizer = network()
    net.set_train()  # BatchNorm normalises each rank's batch and updates its statistics
    loss_fn = nn.CrossEntropyLoss()

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)
    reduce = (
        nn.DistributedGradReducer(optimizer.parameters, mean=True, degree=world)
        if AVERAGE_GRADIENTS
        else None
    )
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 16)).astype(np.float32)
    y = (x @ np.random.default_rng(1).standard_normal((16, 4))).argmax(1).astype(np.int32)
    shard = slice(rank * 128, (rank + 1) * 128)  # each rank its own half
    x, y = x[shard], y[shard]
    with graphaudit.watch(net, optimizer, every=1, fail_on="never", batch_size=16) as watch:
        for step in range(8):
            start = (step * 16) % len(x)
            loss, grads = grad_fn(Tensor(x[start : start + 16]), Tensor(y[start : start + 16]))
            if reduce is not None:
                grads = reduce(grads)
            optimizer(grads)
            watch.step(loss=loss, grads=grads)
    if rank == 0:
        (out / "record.pkl").write_bytes(pickle.dumps(watch.record))


def build() -> dict:
    record = pickle.loads((sample_folder(__file__) / "record.pkl").read_bytes())
    net, optimizer = network()
    return {"net": net, "optimizer": optimizer, "watched": record}
