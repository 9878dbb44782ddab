"""One rank of a data-parallel job, for tests/test_fingerprint.py (not a test module itself).

Under ``msrun`` (``--comm``): initialises ``mindspore.communication``, then for each case
builds a small network — seeded with ``42`` on every rank (``same``) or ``42 + rank``
(``per-rank``, the bug) — audits it with ``graphaudit.audit`` (so GA801 all-gathers the
ranks' fingerprints) and writes ``OUT/<case>/report_rank<R>.json`` and
``OUT/<case>/rank<R>.json`` (the fingerprint).

Without ``--comm`` (a plain process, rank from ``--rank``): no communication, GA801 stays
silent; the fingerprints are written for ``graphaudit compare``.

    msrun --worker_num=2 --local_worker_num=2 --master_port=PORT --join=True \\
          --log_dir=LOGS tests/dist_worker.py --comm --out OUT
    python tests/dist_worker.py --rank 1 --world-size 2 --out OUT
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

import graphaudit
from graphaudit.fingerprint import fingerprint

CASES = {"same": lambda rank: 42, "per-rank": lambda rank: 42 + rank}


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, has_bias=False, weight_init="HeUniform")
        self.bn = nn.BatchNorm2d(4)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(4 * 8 * 8, 10, weight_init="HeUniform", bias_init="zeros")

    def construct(self, x):
        return self.fc(self.flatten(self.bn(self.conv(x))))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--comm", action="store_true", help="initialise mindspore.communication")
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--world-size", type=int, default=1)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    args = parser.parse_args()

    rank, world = args.rank, args.world_size
    if args.comm:
        from mindspore.communication import get_group_size, get_rank, init

        started = time.perf_counter()
        init()
        rank, world = get_rank(), get_group_size()
        print(f"rank {rank}/{world}: init() took {time.perf_counter() - started:.2f}s", flush=True)

    for case in args.cases:
        ms.set_seed(CASES[case](rank))
        net = Net()
        optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)
        x = Tensor(np.ones((2, 3, 8, 8), np.float32))
        started = time.perf_counter()
        report = graphaudit.audit(net, optimizer, inputs=(x,))
        took = time.perf_counter() - started
        folder = Path(args.out) / case
        folder.mkdir(parents=True, exist_ok=True)
        data = json.loads(report.to_json())
        data["audit_seconds"] = took
        (folder / f"report_rank{rank}.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
        if args.comm:
            fingerprint(net).save(folder / f"rank{rank}.json")  # rank and world from communication
        else:
            fingerprint(net, rank=rank, world_size=world).save(folder / f"rank{rank}.json")
        ga801 = sorted(f.subject for f in report.by_check("GA801"))
        print(f"rank {rank}/{world} {case}: audit {took:.2f}s, GA801 on {ga801}", flush=True)


if __name__ == "__main__":
    main()
