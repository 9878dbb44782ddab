"""Other threads are left alone: while one thread audits, another thread's calls are not traced,
its writes are not rolled back, and two audits in two threads report what each reports alone.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Parameter, Tensor, nn, ops
from nets import tensor

import graphaudit

# MindSpore's synchronous dispatch is not safe across threads (a cell freed in one thread while
# another runs a forward pass crashed the process, issue 40): these threads run as users run theirs
pytestmark = pytest.mark.asynchronous


class Spare(nn.Cell):
    """A network with a cell that construct never calls (GA301) and a head left out of the optimizer."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Dense(4, 4)
        self.spare = nn.Dense(4, 4)
        self.head = nn.SequentialCell([nn.ReLU(), nn.Dense(4, 2)])

    def construct(self, x: Tensor) -> Tensor:
        return self.head(self.body(x))


def _audit_spare() -> dict[str, Any]:
    net = Spare()
    report = graphaudit.audit(net, nn.SGD(net.body.trainable_params()), inputs=tensor(2, 4))
    return _comparable(report)


class Frozen(nn.Cell):
    """A two-layer network whose first layer is frozen but still in the optimizer (GA203)."""

    def __init__(self) -> None:
        super().__init__()
        self.first = nn.Dense(4, 8)
        self.second = nn.Dense(8, 3)
        for param in self.first.get_parameters():
            param.requires_grad = False

    def construct(self, x: Tensor) -> Tensor:
        return self.second(ops.tanh(self.first(x)))


def _audit_frozen() -> dict[str, Any]:
    net = Frozen()
    report = graphaudit.audit(net, nn.SGD(list(net.get_parameters())), inputs=tensor(2, 4))
    return _comparable(report)


def _comparable(report: graphaudit.Report) -> dict[str, Any]:
    found = report.to_dict()
    found["graph"] = sorted(
        json.dumps([node, {k: str(v) for k, v in data.items()}])
        for node, data in report.graph.nodes(data=True)
    )
    found["edges"] = sorted(f"{a}->{b}:{d.get('kind')}" for a, b, d in report.graph.edges(data=True))
    return found


def _in_threads(*jobs: Callable[[], Any]) -> list[Any]:
    results: list[Any] = [None] * len(jobs)
    errors: list[BaseException] = []
    start = threading.Barrier(len(jobs))

    def run(index: int, job: Callable[[], Any]) -> None:
        try:
            start.wait()
            results[index] = job()
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=run, args=(i, job)) for i, job in enumerate(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


@pytest.mark.slow
def test_another_threads_forward_passes_and_writes_are_left_alone() -> None:
    mine = nn.SequentialCell([nn.Dense(4, 4), nn.ReLU(), nn.Dense(4, 2)])
    counter = Parameter(Tensor(np.zeros((1,), np.float32)), name="counter", requires_grad=False)
    auditing = threading.Event()
    undone: list[int] = []
    writes = {"done": 0}

    def other_thread() -> None:
        auditing.wait()
        x = tensor(2, 4)
        step = 0
        while auditing.is_set() or step < 50:
            step += 1
            mine(x)  # a plain forward of its own network: never traced, never fails
            ops.assign(counter, Tensor(np.array([step], np.float32)))
            if float(counter.asnumpy()[0]) != step:
                undone.append(step)
        writes["done"] = step

    def auditor() -> None:
        auditing.set()
        try:
            for _ in range(2):
                assert _audit_spare() == alone
        finally:
            auditing.clear()

    alone = _audit_spare()
    _in_threads(auditor, other_thread)
    assert not undone, f"{len(undone)} of {writes['done']} writes of the other thread were undone"
    assert float(counter.asnumpy()[0]) == writes["done"]


@pytest.mark.slow
def test_two_audits_in_two_threads_report_what_each_reports_alone() -> None:
    alone = (_audit_spare(), _audit_frozen())
    assert alone[0]["findings"] and "GA301" in {f["check_id"] for f in alone[0]["findings"]}
    for _ in range(20):
        assert tuple(_in_threads(_audit_spare, _audit_frozen)) == alone


class _Drawing(nn.Cell):
    """A network whose construct draws from every process-wide random state."""

    def __init__(self) -> None:
        super().__init__()
        self.dense = nn.Dense(4, 4)

    def construct(self, x: Tensor) -> Tensor:
        noise = Tensor(np.random.rand(*x.shape).astype(np.float32) * random.random())
        return ops.dropout(self.dense(x) + noise, p=0.5)


def _draw() -> tuple[Any, float, float]:
    """One draw from each of the states :class:`_Drawing` uses.

    The seeds a new ``nn.Dropout`` takes come from the same counter ``ops.dropout`` advances;
    no kernel runs: MindSpore 2.10 cannot run Dropout kernels in two threads at once
    ("The pointer[runtime_info] is null", without graphaudit too).
    """
    seeds = nn.Dropout(p=0.5).dropout.attrs["Seed1"]
    return seeds, float(np.random.rand()), random.random()


@pytest.mark.slow
def test_another_threads_random_draws_are_neither_rewound_nor_advanced_by_an_audit() -> None:
    x, label = tensor(4, 4), tensor(4, 4)

    def seeded() -> None:
        ms.set_seed(7)  # also seeds numpy
        random.seed(7)

    seeded()
    reference = [_draw() for _ in range(3000)]
    net = _Drawing()  # its initialisers draw from numpy: before the seed
    net.set_train(True)
    optimizer = nn.SGD(net.trainable_params())
    seeded()
    auditing = threading.Event()
    drawn: list[tuple[Any, float, float]] = []

    def other_thread() -> None:
        auditing.wait()
        while (auditing.is_set() or len(drawn) < 50) and len(drawn) < len(reference):
            drawn.append(_draw())
            time.sleep(0.002)  # draws spread over the whole audit, before and after its restores

    def auditor() -> None:
        auditing.set()
        try:
            for _ in range(2):
                graphaudit.audit(
                    net,
                    optimizer,
                    inputs=x,
                    probe=1,
                    loss_fn=nn.MSELoss(),
                    label=label,
                )
        finally:
            auditing.clear()

    try:
        _in_threads(auditor, other_thread)
    finally:
        ms.set_seed(0)
    assert len(drawn) < len(reference), "the other thread drew more than the reference holds"
    mismatch = next((i for i, (a, b) in enumerate(zip(drawn, reference)) if a != b), None)
    assert mismatch is None, f"draw {mismatch} of {len(drawn)} differs from a run without the audit"
