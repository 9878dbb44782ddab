"""GA962 bad: two data-parallel ranks (a real msrun job) train on their own shards without averaging the gradients.

``build()`` launches ``msrun --worker_num=2`` with this file as the worker: each rank trains a
small MLP on its own half of the data, watched by ``graphaudit.watch()``, which all-gathers
the ranks' weight fingerprints every few sampled steps. Rank 0 saves its watch's record;
``build()`` returns it with a network built as every rank built it.
"""

import os
import pickle
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

import graphaudit

SUBJECT = "fc.bias"
AVERAGE_GRADIENTS = False


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(16, 32)
        self.relu = nn.ReLU()
        self.head = nn.Dense(32, 4)

    def construct(self, x):
        return self.head(self.relu(self.fc(x)))


def network() -> tuple[nn.Cell, nn.Optimizer]:
    ms.set_seed(0)  # the same initial weights on every rank
    net = Net()
    return net, nn.SGD(net.trainable_params(), learning_rate=0.1)


def worker(out: Path) -> None:
    from mindspore.communication import get_group_size, get_rank, init

    ms.set_context(mode=ms.PYNATIVE_MODE)
    init()
    rank, world = get_rank(), get_group_size()
    net, optimizer = network()
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


def msrun() -> str:
    beside = Path(sys.executable).parent / "msrun"
    found = str(beside) if beside.exists() else shutil.which("msrun")
    if found is None:
        raise RuntimeError("msrun (MindSpore's launcher) is not installed")
    return found


def build() -> dict:
    with tempfile.TemporaryDirectory() as folder:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        command = [
            msrun(),
            "--worker_num=2",
            "--local_worker_num=2",
            f"--master_port={port}",
            "--join=True",
            f"--log_dir={folder}/logs",
            __file__,
            folder,
        ]
        env = {**os.environ, "GLOG_v": "3", "PYTHONPATH": os.pathsep.join(sys.path)}
        done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=600)
        record_file = Path(folder) / "record.pkl"
        if done.returncode != 0 or not record_file.exists():
            logs = "".join(p.read_text()[-1500:] for p in Path(folder, "logs").glob("*.log"))
            raise RuntimeError(f"the msrun job failed ({done.returncode}): {done.stderr[-1500:]}{logs}")
        record = pickle.loads(record_file.read_bytes())
    net, optimizer = network()
    return {"net": net, "optimizer": optimizer, "watched": record}


if __name__ == "__main__":
    worker(Path(sys.argv[1]))
