"""Measurements on a real model (mindcv, default resnet50): audit and render vs one forward pass.

Run inside worker subprocesses started by ``benchmarks/run.py``; each function builds the
model itself, so that every measurement happens in a fresh interpreter.

- ``forward``: ``net(x).asnumpy()`` in PyNative mode. PyNative dispatches kernels
  asynchronously: without reading the output the timer would stop before the pass ends.
- ``structure audit``: ``graphaudit.audit(net, optimizer)``, no inputs (a Momentum optimizer
  over every trainable parameter).
- ``full audit``: ``graphaudit.audit(net, optimizer, inputs=x, loss_fn=nn.CrossEntropyLoss())``:
  the structure, one traced forward pass, the loss traced on its output (no label given:
  graphaudit makes a stand-in), and every static check.
- ``render``: ``report.render("report.svg")`` of the full audit's report (Graphviz ``dot``
  included); ``full audit + render`` is their sum, repeat by repeat.
"""

from __future__ import annotations

import tempfile
import time
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


def time_model(model: str, size: int, repeats: int) -> dict[str, Any]:
    """Warm up, then time forward / structure audit / full audit / render, interleaved."""
    import graphaudit

    net, optimizer, x = build(model, size)
    reports: list[Any] = []
    with tempfile.TemporaryDirectory() as tmp:
        svg = Path(tmp) / "report.svg"

        loss = loss_fn()

        def full() -> None:
            reports.append(graphaudit.audit(net, optimizer, inputs=x, loss_fn=loss))

        def render() -> None:
            reports[-1].render(svg)  # the report of the full audit just before

        runs = {
            "forward": lambda: net(x).asnumpy(),
            "structure": lambda: graphaudit.audit(net, optimizer),
            "full": full,
            "render": render,
        }
        for run in runs.values():  # warm-up: kernels, check modules, caches, dot's first start
            run()
        seconds = interleave(runs, repeats)
        report = reports[-1]
        drawn = svg.stat().st_size
    seconds["full+render"] = [a + b for a, b in zip(seconds["full"], seconds["render"])]
    return {
        "seconds": seconds,
        "graph_nodes": report.graph.number_of_nodes(),
        "graph_edges": report.graph.number_of_edges(),
        "findings": len(report.findings),
        "svg_kib": drawn / 1024,
        "check_seconds": check_seconds(net, optimizer, x),
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


def memory_model(model: str, size: int, phase: str) -> dict[str, Any]:
    """Peak-RSS rise of *phase* (``forward`` or ``full``) run once in a fresh process, from the built model.

    Every graphaudit module is imported before (``import_mib``, the RSS that costs, is
    reported apart): graphaudit imports most of itself lazily, once per process.

    In the ``forward`` process a full audit then runs too, after the forward pass: its rise on
    top of a warmed-up process is reported as ``warm_full_mib``.
    """
    import graphaudit
    from benchmarks.common import import_graphaudit

    net, optimizer, x = build(model, size)
    import_mib, failed = import_graphaudit()  # one-time imports are not the audit's memory
    runs = {
        "forward": lambda: net(x).asnumpy(),
        "full": lambda: graphaudit.audit(net, optimizer, inputs=x, loss_fn=loss_fn()),
    }
    rise, reset, _ = peak_rise_mib(runs[phase])
    result: dict[str, Any] = {
        "phase": phase,
        "peak_rise_mib": rise,
        "peak_reset": reset,
        "import_mib": import_mib,
        "import_failed": failed,
    }
    if phase == "forward":
        result["warm_full_mib"], warm_reset, _ = peak_rise_mib(runs["full"])
        result["peak_reset"] = reset and warm_reset
    return result
