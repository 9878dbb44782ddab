"""Scaling on synthetic networks, and drawing a large one through the collapsed fallback.

The networks are :func:`benchmarks.common.synthetic_of_size`: stages of 100 leaf cells
(``Dense(4, 4)`` / activation), i.e. about as many parameters as cells. Run inside worker
subprocesses started by ``benchmarks/run.py``.

- ``time_scaling``: one process builds every size, then times, interleaved, the
  structure-only audit (``graphaudit.audit(net, optimizer)``) of every size and, for the
  traced sizes, a forward pass and the full audit with inputs (``1x4``). A traced pass costs
  about a millisecond per PyNative operation here, so a traced 50,000-cell pass (50,000 ops,
  each timed several times) is left out by default.
- ``memory_scaling``: one process per size (and mode) measures the peak-RSS rise of one
  audit, after a warm-up audit of a tiny network (imports, caches) and, when traced, one
  forward pass of the network itself.
- ``time_render``: ``report.render(svg)`` of a structure-only audit of a 5,051-cell network:
  above ``max_nodes`` (1,500) drawn nodes the drawing is collapsed to the depth that fits.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from benchmarks.common import count_cells, interleave, peak_rise_mib, stats, synthetic_of_size


def _build(cells: int) -> tuple[Any, Any]:
    import mindspore as ms
    from mindspore import nn

    ms.set_context(mode=ms.PYNATIVE_MODE)
    net = synthetic_of_size(cells)
    return net, nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)


def _input() -> Any:
    import mindspore as ms
    import numpy as np

    return ms.Tensor(np.ones((1, 4), np.float32))


def _warm_up() -> None:
    import graphaudit

    net, optimizer = _build(10)
    graphaudit.audit(net, optimizer, inputs=_input())


def time_scaling(sizes: list[int], traced_sizes: list[int], repeats: int) -> dict[str, Any]:
    import graphaudit

    _warm_up()
    x = _input()
    nets = {cells: _build(cells) for cells in sorted(set(sizes) | set(traced_sizes))}
    runs = {}
    for cells in sizes:
        net, optimizer = nets[cells]
        runs[f"structure:{cells}"] = lambda net=net, optimizer=optimizer: graphaudit.audit(net, optimizer)
    for cells in traced_sizes:
        net, optimizer = nets[cells]
        runs[f"forward:{cells}"] = lambda net=net: net(x).asnumpy()
        runs[f"full:{cells}"] = lambda net=net, optimizer=optimizer: graphaudit.audit(
            net, optimizer, inputs=x
        )
    for name, run in runs.items():  # warm-up: the first forward pass of a net compiles its kernels
        if not name.startswith("structure"):
            run()
    seconds = interleave(runs, repeats)
    result: dict[str, Any] = {"cells": {}, "params": {}, "nodes": {}, "phases": {}}
    for cells, (net, _) in nets.items():
        result["cells"][cells] = count_cells(net)
        result["params"][cells] = len(net.trainable_params())
        result["nodes"][cells] = graphaudit.to_networkx(net).number_of_nodes()
    for name, times in seconds.items():
        result["phases"][name] = stats(times)
    return result


def memory_scaling(cells: int, traced: bool) -> dict[str, Any]:
    import graphaudit

    _warm_up()
    net, optimizer = _build(cells)
    if traced:
        x = _input()
        net(x).asnumpy()
        rise, reset, report = peak_rise_mib(lambda: graphaudit.audit(net, optimizer, inputs=x))
    else:
        rise, reset, report = peak_rise_mib(lambda: graphaudit.audit(net, optimizer))
    return {
        "cells": cells,
        "traced": traced,
        "peak_rise_mib": rise,
        "peak_reset": reset,
        "graph_nodes": report.graph.number_of_nodes(),
    }


def time_render(stages: int, width: int, repeats: int) -> dict[str, Any]:
    """Render a structure-only audit of ``stages x width`` leaf cells, timed ``repeats`` times."""
    import graphaudit
    from benchmarks.common import synthetic_net
    from graphaudit.draw.dot import draw

    _warm_up()
    net = synthetic_net(stages, width)
    report = graphaudit.audit(net)
    with tempfile.TemporaryDirectory() as tmp:
        svg = Path(tmp) / "large.svg"
        runs = {"audit": lambda: graphaudit.audit(net), "render": lambda: report.render(svg)}
        runs["render"]()  # warm-up
        seconds = interleave(runs, repeats)
        kib = svg.stat().st_size / 1024
    drawing = draw(report.graph, report.findings)
    return {
        "cells": count_cells(net),
        "graph_nodes": report.graph.number_of_nodes(),
        "drawn": drawing.plan.count,
        "depth": drawing.plan.depth,
        "notes": list(drawing.plan.notes),
        "svg_kib": kib,
        "phases": {name: stats(times) for name, times in seconds.items()},
    }
