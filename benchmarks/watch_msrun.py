"""The training watch under ``msrun``: a watched data-parallel epoch / the same epoch unwatched.

Row 12b (issue 36; nothing about timing is asserted anywhere): one real 2-rank ``msrun`` job
(this file is its script) trains the same small network on each rank's shard, data parallel
(``DATA_PARALLEL``, gradients averaged by ``Model.train``'s train cell), one epoch of
``--steps`` steps at a time, interleaved: unwatched, watched (``graphaudit.Watch()``, the
default sampling: every 50 steps, where each sampled step all-gathers the ranks' losses and
every 4th also their weight fingerprints), unwatched, ... after one warm-up epoch of each.
The ratio is of rank 0's medians (and minimums); the target is <= 1.03x, the default watch's
of row 12. The launcher records the machine and its load (``benchmarks.common.LoadMonitor``).

The network is an MLP (256 -> 1024 -> 1024 -> 10, batches of 64 a rank) whose step takes
tens of milliseconds on a CPU: a training whose step is far shorter than the watch's
per-step bookkeeping (reading the loss) is not what the watch is for.

Usage::

    python -m benchmarks.watch_msrun [--steps 200] [--repeats 5] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET = 1.03
WIDTH, FEATURES, CLASSES, BATCH = 1024, 256, 10, 64


def _epoch(model: Any, data: Any, watch: Any) -> float:
    start = time.perf_counter()
    model.train(1, data, callbacks=[watch] if watch is not None else None, dataset_sink_mode=False)
    return time.perf_counter() - start


def rank_job(out: Path, steps: int, repeats: int) -> None:
    """One rank of the job: warm-up, then *repeats* interleaved (unwatched, watched) epochs."""
    import mindspore as ms
    import numpy as np
    from mindspore import nn
    from mindspore.communication import get_group_size, get_rank, init

    import graphaudit

    init()
    rank, world = get_rank(), get_group_size()
    ms.set_context(mode=ms.PYNATIVE_MODE)  # where the watch sees the gradients (row 12's mode)
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
    ms.set_seed(0)
    net = nn.SequentialCell(
        [nn.Dense(FEATURES, WIDTH), nn.ReLU(), nn.Dense(WIDTH, WIDTH), nn.ReLU(), nn.Dense(WIDTH, CLASSES)]
    )
    model = ms.train.Model(net, nn.CrossEntropyLoss(), nn.Momentum(net.trainable_params(), 0.01, 0.9))
    rng = np.random.default_rng(rank)  # each rank its own shard
    x = rng.standard_normal((steps * BATCH, FEATURES)).astype(np.float32)
    y = rng.integers(0, CLASSES, steps * BATCH).astype(np.int32)
    data = ms.dataset.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(BATCH)
    variants = {"plain": lambda: None, "watched": lambda: graphaudit.Watch(fail_on="never")}
    for make in variants.values():  # warm-up: kernels, the watch's modules, the collectives
        _epoch(model, data, make())
    seconds: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeats):
        for name, make in variants.items():
            seconds[name].append(_epoch(model, data, make()))
    if rank == 0:
        result = {"seconds": seconds, "world": world, "steps": steps, "batch": BATCH, "width": WIDTH}
        (out / "watch_msrun.json").write_text(json.dumps(result), encoding="utf-8")


def timed(steps: int, repeats: int) -> dict[str, Any]:
    """Run the 2-rank job (this file under ``msrun``) and return rank 0's times, the machine and its load."""
    import mindspore as ms

    from benchmarks.common import LoadMonitor
    from graphaudit.distributed.jobs import run_msrun

    with tempfile.TemporaryDirectory(prefix="graphaudit-bench-msrun-") as folder, LoadMonitor() as load:
        run_msrun(Path(__file__), [folder, str(steps), str(repeats)], Path(folder), timeout=3600)
        result = json.loads(Path(folder, "watch_msrun.json").read_text(encoding="utf-8"))
    result["load"] = load.to_dict()
    result["machine"] = {
        "machine": platform.machine(),
        "processor": platform.processor(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "mindspore": ms.__version__,
    }
    return result


def ratio(result: dict[str, Any]) -> tuple[float, float]:
    """(median ratio, minimum ratio) of watched over unwatched epochs."""
    seconds = result["seconds"]
    return (
        statistics.median(seconds["watched"]) / statistics.median(seconds["plain"]),
        min(seconds["watched"]) / min(seconds["plain"]),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = timed(args.steps, args.repeats)
    median, minimum = ratio(result)
    plain = statistics.median(result["seconds"]["plain"])
    print(
        f"watch under msrun ({result['world']} ranks, {args.steps} steps of {BATCH} a rank): "
        f"unwatched epoch {plain:.2f} s (median), watched / unwatched {median:.3f}x median, "
        f"{minimum:.3f}x min (target <= {TARGET}x); {result['machine']}"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    if len(sys.argv) == 4 and not sys.argv[1].startswith("-"):  # run by msrun: OUT STEPS REPEATS
        del sys.path[0]  # this file's folder: its module names must not shadow the packages'
        rank_job(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
    else:
        main()
