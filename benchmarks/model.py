"""Measurements on a real model (mindcv, default resnet50): audit and render vs one forward pass, in both modes.

Run inside worker subprocesses started by ``benchmarks/run.py``; each function builds the
model itself, so that every measurement happens in a fresh interpreter.

The network is measured in *training mode* (``net.set_train(True)``: what users audit, the
network they are about to train; BatchNorm writes its moving statistics, which the audit must
put back) and in *inference mode* (``Cell.training`` is ``False`` until ``set_train()``), every
phase of both in one process, interleaved, each against a forward pass in the same mode.

- ``forward:<mode>``: ``net(x).asnumpy()`` in PyNative mode. PyNative dispatches kernels
  asynchronously: without reading the output the timer would stop before the pass ends.
- ``structure``: ``graphaudit.audit(net, optimizer)``, no inputs (a Momentum optimizer
  over every trainable parameter), inference mode.
- ``full:<mode>``: ``graphaudit.audit(net, optimizer, inputs=x, loss_fn=nn.CrossEntropyLoss())``:
  the structure, one traced forward pass, the loss traced on its output (no label given:
  graphaudit makes a stand-in), and every static check.
- ``render:<mode>``: ``report.render("report.svg")`` of that full audit's report (Graphviz
  ``dot`` included); ``full+render:<mode>`` is their sum, repeat by repeat.

Each run switches the mode with ``set_train`` first (a walk of the cells, about a
millisecond, in forward and audit alike).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.common import interleave, peak_rise_mib


def loss_fn() -> Any:
    from mindspore import nn

    return nn.CrossEntropyLoss()


def build(model: str, size: int) -> tuple[Any, Any, Any]:
    """``(net, optimizer, x)``: an untrained mindcv model, Momentum over it, one random batch."""
    import mindcv
    import mindspore as ms
    import numpy as np
    from mindspore import nn

    ms.set_context(mode=ms.PYNATIVE_MODE)
    np.random.seed(0)
    if model.startswith("synthetic:"):  # for smoke tests: a small network, no mindcv weights
        from benchmarks.common import synthetic_of_size

        net = synthetic_of_size(int(model.split(":", 1)[1]))
        x = ms.Tensor(np.random.rand(1, 4).astype(np.float32))
    else:
        net = mindcv.create_model(model, pretrained=False)
        x = ms.Tensor(np.random.rand(1, 3, size, size).astype(np.float32))
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)
    return net, optimizer, x


MODES = {"training": True, "inference": False}


def time_model(model: str, size: int, repeats: int, modes: tuple[str, ...] = tuple(MODES)) -> dict[str, Any]:
    """Warm up, then time forward / full audit / render in each of *modes*, and the structure audit, interleaved."""
    import graphaudit

    net, optimizer, x = build(model, size)
    reports: dict[str, Any] = {}
    loss = loss_fn()
    with tempfile.TemporaryDirectory() as tmp:
        svg = Path(tmp) / "report.svg"

        def structure() -> None:
            net.set_train(False)
            graphaudit.audit(net, optimizer)

        def forward(training: bool) -> Callable[[], None]:
            def run() -> None:
                net.set_train(training)
                net(x).asnumpy()

            return run

        def full(mode: str) -> Callable[[], None]:
            def run() -> None:
                net.set_train(MODES[mode])
                reports[mode] = graphaudit.audit(net, optimizer, inputs=x, loss_fn=loss)

            return run

        def render(mode: str) -> Callable[[], None]:
            return lambda: reports[mode].render(svg)  # the report of the full audit just before

        tiny = _tiny_input(model, x)

        def forward_tiny() -> None:
            net.set_train(True)
            net(tiny).asnumpy()

        def full_tiny() -> None:
            net.set_train(True)
            reports["tiny"] = graphaudit.audit(net, optimizer, inputs=tiny, loss_fn=loss)

        runs: dict[str, Callable[[], Any]] = {"structure": structure}
        for mode in modes:
            runs[f"forward:{mode}"] = forward(MODES[mode])
            runs[f"full:{mode}"] = full(mode)
            runs[f"render:{mode}"] = render(mode)
        # the same cells and calls on a small input: kernels that take little time leave the
        # audit's own work in sight, on any machine (rows 2u)
        runs["forward:tiny"], runs["full:tiny"] = forward_tiny, full_tiny
        for run in runs.values():  # warm-up: kernels, check modules, caches, dot's first start
            run()
        seconds = interleave(runs, repeats)
        drawn = svg.stat().st_size
    net.set_train(False)
    for mode in modes:
        seconds[f"full+render:{mode}"] = [
            a + b for a, b in zip(seconds[f"full:{mode}"], seconds[f"render:{mode}"])
        ]
    return {
        "modes": list(modes),
        "seconds": seconds,
        "graph_nodes": {mode: report.graph.number_of_nodes() for mode, report in reports.items()},
        "graph_edges": {mode: report.graph.number_of_edges() for mode, report in reports.items()},
        "findings": {mode: len(report.findings) for mode, report in reports.items()},
        "units": {mode: work_units(report) for mode, report in reports.items()},
        "svg_kib": drawn / 1024,
        "check_seconds": check_seconds(net, optimizer, x),
    }


def _tiny_input(model: str, x: Any) -> Any:
    """A ``1x3x32x32`` batch for an image model (the smallest resnet50 reduces to 1x1), else *x*."""
    import mindspore as ms
    import numpy as np

    if model.startswith("synthetic:"):
        return x
    return ms.Tensor(np.random.default_rng(1).random((1, 3, 32, 32), dtype=np.float32))


def work_units(report: Any) -> dict[str, int]:
    """What the audit of *report* worked through: traced cell calls, cells, parameters, checks run.

    The audit's own work is divided by these (``benchmarks/rows.py``, rows 2u): a cost per unit
    does not shrink or grow with the speed of the kernels, as a ratio to the forward pass does.
    """
    from collections import Counter

    kinds = Counter(data.get("kind") for _, data in report.graph.nodes(data=True))
    return {
        "calls": kinds["call"],
        "parameters": kinds["parameter"],
        "cells": kinds["cell"],
        "checks": len(report.checks_run),
    }


def check_seconds(net: Any, optimizer: Any, x: Any) -> dict[str, dict[str, float]]:
    """Seconds per check and per kind of evidence (one run each), structure-only and full: where the audit's time goes.

    Evidence is made lazily, by the first check that needs it: each kind is timed on its own
    (``evidence:<Kind>``) before the checks that need it, so that a check's time is its own.
    Uses graphaudit's internals (``AuditContext``); returns ``{"error": ...}`` when they changed.
    """
    try:
        from graphaudit.checks import all_checks
        from graphaudit.checks.context import AuditContext
        from graphaudit.evidence.network import NetworkGraph
    except ImportError as err:
        return {"error": {str(err): 0.0}}

    out: dict[str, dict[str, float]] = {}
    for label, inputs, loss in (("structure", None, None), ("full", x, loss_fn())):
        try:
            ctx = AuditContext.build(net, optimizer, inputs=inputs, loss_fn=loss, mode="train")
            start = time.perf_counter()
            ctx.need(NetworkGraph)
        except Exception as err:  # internals another developer is changing must not stop the benchmark
            out[label] = {f"error: {type(err).__name__}": 0.0}
            continue
        times = {"capture": time.perf_counter() - start}
        for check_id, check in all_checks().items():
            missing = False
            for kind in check.needs:
                key = f"evidence:{kind.__name__}"
                start = time.perf_counter()
                try:
                    made = ctx.get(kind)
                except Exception:
                    made = None
                if key not in times:
                    times[key] = time.perf_counter() - start
                missing = missing or made is None
            if missing:
                continue
            start = time.perf_counter()
            try:
                check(ctx)
            except Exception:  # a check another developer is still writing must not stop the benchmark
                continue
            times[check_id] = time.perf_counter() - start
        out[label] = times
    return out


def memory_model(model: str, size: int, phase: str, mode: str = "inference") -> dict[str, Any]:
    """Peak-RSS rise of *phase* (``forward`` or ``full``) run once in a fresh process, from the built model in *mode*.

    Every graphaudit module is imported before (``import_mib``, the RSS that costs, is
    reported apart): graphaudit imports most of itself lazily, once per process.

    In the ``forward`` process a full audit then runs too, after the forward pass: its rise on
    top of a warmed-up process is reported as ``warm_full_mib``.
    """
    import graphaudit
    from benchmarks.common import import_graphaudit

    net, optimizer, x = build(model, size)
    net.set_train(MODES[mode])
    import_mib, failed = import_graphaudit()  # one-time imports are not the audit's memory
    runs = {
        "forward": lambda: net(x).asnumpy(),
        "full": lambda: graphaudit.audit(net, optimizer, inputs=x, loss_fn=loss_fn()),
    }
    rise, reset, _ = peak_rise_mib(runs[phase])
    result: dict[str, Any] = {
        "phase": phase,
        "mode": mode,
        "peak_rise_mib": rise,
        "peak_reset": reset,
        "import_mib": import_mib,
        "import_failed": failed,
    }
    if phase == "forward":
        result["warm_full_mib"], warm_reset, _ = peak_rise_mib(runs["full"])
        result["peak_reset"] = reset and warm_reset
    return result


def _first_loss(loss: Any, output: Any) -> None:
    """The loss's first run on *output*, with the stand-in label the audit traces it with."""
    from graphaudit.capture.training.loss import loss_calls

    calls = loss_calls(loss, output, None)
    if calls:
        loss(*calls[0][0]).asnumpy()


def memory_parts(model: str, size: int, mode: str = "inference", python_peak: bool = False) -> dict[str, Any]:
    """Row 6 taken apart, in one fresh process: MindSpore's own growth, then graphaudit's part.

    After the first forward pass (``forward_mib``, the row's baseline), a second plain forward
    pass and the loss's first run on its output (new kernels; the stand-in label the audit
    uses) are MindSpore's own growth (``mindspore_mib``, also each apart): a full audit after
    one forward pass runs both. A full audit then (``audit_mib``) is what remains: graphaudit's
    part (its wrappers, graph, saved copies, checks, report) plus what a third pass still grows.

    With *python_peak*, ``tracemalloc`` runs during that audit (so its RSS is not the row's):
    ``python_peak_mib`` is the peak of Python's allocations, ``python_kept_mib`` what the audit
    left allocated (the report held), ``python_top`` the largest allocation sites at the end.
    """
    import tracemalloc

    import graphaudit
    from benchmarks.common import import_graphaudit

    net, optimizer, x = build(model, size)
    net.set_train(MODES[mode])
    import_graphaudit()
    loss = loss_fn()
    output: list[Any] = []

    def forward() -> None:
        out = net(x)
        out.asnumpy()
        output.append(out)

    forward_mib, reset, _ = peak_rise_mib(forward)
    second_mib, reset2, _ = peak_rise_mib(lambda: net(x).asnumpy())
    loss_mib, reset3, _ = peak_rise_mib(lambda: _first_loss(loss, output[0]))
    result: dict[str, Any] = {
        "mode": mode,
        "forward_mib": forward_mib,
        "second_forward_mib": second_mib,
        "loss_first_mib": loss_mib,
        "mindspore_mib": second_mib + loss_mib,
        "peak_reset": reset and reset2 and reset3,
    }
    kept: list[Any] = []

    def audit() -> None:
        kept.append(graphaudit.audit(net, optimizer, inputs=x, loss_fn=loss))

    if python_peak:
        tracemalloc.start(1)
        base = tracemalloc.get_traced_memory()[0]
        audit()
        now, peak = tracemalloc.get_traced_memory()
        top = tracemalloc.take_snapshot().statistics("lineno")[:12]
        tracemalloc.stop()
        result["python_peak_mib"] = (peak - base) / 2**20
        result["python_kept_mib"] = (now - base) / 2**20
        result["python_top"] = [[str(stat.traceback), stat.size / 2**20, stat.count] for stat in top]
    else:
        result["audit_mib"], reset4, _ = peak_rise_mib(audit)
        result["peak_reset"] = result["peak_reset"] and reset4
    return result
