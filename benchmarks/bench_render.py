"""Benchmark graphaudit.draw: how long drawing takes on a real model and on a 5,000-cell net.

Cases (the capture or audit itself is not timed, only the rendering):

- ``resnet50``: mindcv resnet50 (pretrained=False, input 1x3x64x64) audited with an optimizer
  that leaves out the classifier (two GA201 errors), drawn in full, at depth 2, and as the
  HTML report.
- ``synthetic-5000``: a SequentialCell of 50 stages x 100 cells (Dense / activation,
  consecutive stages of different structure, so rolling up cannot shrink it): 5,051 cells,
  drawn through the automatic fallback (collapsed to the depth that fits ``max_nodes``),
  structure-only and traced (``--skip-traced`` leaves the traced capture out, ~30 s).

Columns: ``graph nodes`` (nodes of the captured graph), ``drawn`` (nodes and clusters in the
DOT source), ``depth`` (the depth drawn at), ``DOT s`` (building the DOT text: tree,
collapse plan, escaping), ``dot s`` (Graphviz's layout and output), ``total s`` (what a user
waits for: ``render_report`` end to end), ``KiB`` (output size), ``size pt`` (the drawing's
width x height, from the SVG: what a reader has to scroll). Median of ``--repeats``.

Usage::

    PYTHONPATH=. python benchmarks/bench_render.py [--repeats 3] [--skip-traced] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _median_time(run: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def svg_size(path: Path) -> str:
    """``width x height`` in points of the first SVG in *path* (an SVG file or an HTML page)."""
    found = re.search(r'<svg width="(\d+)pt" height="(\d+)pt"', path.read_text(encoding="utf-8"))
    return f"{found[1]}x{found[2]}" if found else "-"


def measure(
    name: str, report: Any, options: dict[str, Any], fmt: str, repeats: int, out: Path
) -> dict[str, Any]:
    from graphaudit.draw.dot import draw
    from graphaudit.draw.engine import run_dot
    from graphaudit.report.render import render_report

    draw_s, drawing = _median_time(lambda: draw(report.graph, report.findings, **options), repeats)
    dot_s, _ = _median_time(lambda: run_dot(drawing.dot, "svg", timeout=300), repeats)
    path = out / f"{name}.{fmt}"
    total_s, _ = _median_time(
        lambda: render_report(report, path, format=fmt, timeout=300, **options), repeats
    )
    label = ", ".join(f"{k}={v}" for k, v in options.items()) or "defaults"
    return {
        "case": name,
        "options": f"{label}, {fmt}",
        "graph_nodes": report.graph.number_of_nodes(),
        "drawn": drawing.plan.count,
        "depth": drawing.plan.depth,
        "dot_text_s": draw_s,
        "dot_s": dot_s,
        "total_s": total_s,
        "kib": path.stat().st_size / 1024,
        "size_pt": svg_size(path),
        "notes": drawing.plan.notes,
    }


def resnet_report() -> Any:
    import mindcv
    import numpy as np
    from mindspore import Tensor, nn

    import graphaudit

    net = mindcv.create_model("resnet50", pretrained=False)
    optimizer = nn.Momentum(net.trainable_params()[:-2], learning_rate=0.01, momentum=0.9)
    x = Tensor(np.random.default_rng(0).random((1, 3, 64, 64), dtype=np.float32))
    return graphaudit.audit(net, optimizer, inputs=x)


def synthetic_net(stages: int = 50, width: int = 100) -> Any:
    from mindspore import nn

    acts = (nn.ReLU, nn.Tanh, nn.Sigmoid)
    return nn.SequentialCell(
        [
            nn.SequentialCell([nn.Dense(4, 4) if j % 2 == 0 else acts[s % 3]() for j in range(width)])
            for s in range(stages)
        ]
    )


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    import numpy as np
    from mindspore import Tensor

    import graphaudit

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        report = resnet_report()
        for options, fmt in (
            ({}, "svg"),
            ({"depth": 2}, "svg"),
            ({"view": "structure"}, "svg"),
            ({}, "html"),
        ):
            rows.append(measure("resnet50", report, options, fmt, args.repeats, out))
        net = synthetic_net()
        graphs = [("synthetic-5000 structure", graphaudit.to_networkx(net))]
        if not args.skip_traced:
            graphs.append(
                (
                    "synthetic-5000 traced",
                    graphaudit.to_networkx(net, inputs=Tensor(np.ones((1, 4), np.float32))),
                )
            )
        for name, graph in graphs:
            synthetic = graphaudit.Report([], graph, network="Synthetic")
            rows.append(measure(name, synthetic, {}, "svg", args.repeats, out))
    return rows


def format_table(rows: list[dict[str, Any]]) -> str:
    header = (
        f"{'case':<26} {'options':<22} {'graph nodes':>11} {'drawn':>6} {'depth':>5} "
        f"{'DOT s':>7} {'dot s':>7} {'total s':>8} {'KiB':>8} {'size pt':>11}"
    )
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append(
            f"{r['case']:<26} {r['options']:<22} {r['graph_nodes']:>11} {r['drawn']:>6} {r['depth']:>5} "
            f"{r['dot_text_s']:>7.3f} {r['dot_s']:>7.3f} {r['total_s']:>8.3f} {r['kib']:>8.1f} {r['size_pt']:>11}"
        )
    notes = sorted({n for r in rows for n in r["notes"]})
    lines += [f"note: {n}" for n in notes]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-traced", action="store_true", help="leave out the traced 5,000-cell capture")
    parser.add_argument("--json", type=Path, help="also write the results as JSON")
    args = parser.parse_args(argv)
    rows = run(args)
    print(format_table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    sys.exit(main())
