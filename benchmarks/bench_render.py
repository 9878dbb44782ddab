"""Benchmark graphaudit.draw: how long drawing takes on a real model and on a 5,000-cell net.

Cases (the capture or audit itself is not timed, only the rendering):

- ``resnet50``: mindcv resnet50 (pretrained=False, input 1x3x64x64) audited with an optimizer
  that leaves out the classifier (two GA201 errors), drawn in full, at depth 2, and as the
  HTML report.
- ``synthetic-5000``: a SequentialCell of 50 stages x 100 cells (Dense / activation,
  consecutive stages of different structure, so rolling up cannot shrink it): 5,051 cells,
  drawn through the automatic fallback (collapsed to the depth that fits ``max_nodes``),
  structure-only and traced (``--skip-traced`` leaves the traced capture out, ~10 s), and
  the traced one as the HTML explorer.
- ``transformer-24``: ``nn.TransformerEncoder`` of 24 layers (d_model 64), audited, as the
  HTML explorer.

With ``--browser`` each HTML explorer is also opened in headless Chromium (Selenium, Debian's
``chromium`` and ``chromium-driver``): ``open s`` is the time from asking for the page until
the explorer is ready, ``expand s`` the time from clicking the first box's + until the new
view, laid out in the page by Graphviz-WebAssembly, is shown. The load average is printed.

Columns: ``graph nodes`` (nodes of the captured graph), ``drawn`` (nodes and clusters in the
DOT source; for HTML, in the view the explorer opens on), ``depth`` (the depth drawn at), ``DOT s`` (building the DOT text: tree,
collapse plan, escaping), ``dot s`` (Graphviz's layout and output), ``total s`` (what a user
waits for: ``render_report`` end to end), ``KiB`` (output size), ``size pt`` (the drawing's
width x height, from the SVG: what a reader has to scroll). Median of ``--repeats``.

Usage::

    PYTHONPATH=. python benchmarks/bench_render.py [--repeats 3] [--skip-traced] [--browser] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
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
    path = out / f"{name.replace(' ', '-')}-{len(list(out.iterdir()))}.{fmt}"
    total_s, _ = _median_time(
        lambda: render_report(report, path, format=fmt, timeout=300, **options), repeats
    )
    label = ", ".join(f"{k}={v}" for k, v in options.items()) or "defaults"
    shown = drawing.plan
    if fmt == "html":  # the view the explorer opens on
        from graphaudit.draw.explorer import explorer_model, start_dot

        shown = start_dot(drawing, explorer_model(drawing, report.graph))[1]
    return {
        "case": name,
        "options": f"{label}, {fmt}",
        "graph_nodes": report.graph.number_of_nodes(),
        "drawn": shown.count,
        "depth": shown.depth,
        "dot_text_s": draw_s,
        "dot_s": dot_s,
        "total_s": total_s,
        "kib": path.stat().st_size / 1024,
        "file": path.name,
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


def transformer_report() -> Any:
    import numpy as np
    from mindspore import Tensor, nn

    import graphaudit

    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(64, 4, 128, batch_first=True), num_layers=24)
    x = Tensor(np.random.default_rng(0).random((2, 8, 64), dtype=np.float32))
    return graphaudit.audit(encoder, nn.Adam(encoder.trainable_params()), inputs=x)


BROWSER_SCRIPT = """
const done = arguments[arguments.length - 1], app = document.querySelector('.ga-app');
const toggle = app.querySelector('.ga-toggle.ga-open');
if (!toggle) { done(null); return; }
const start = performance.now();
toggle.dispatchEvent(new MouseEvent('click', {bubbles: true}));
(function wait() {
  const status = app.querySelector('.ga-status');
  if (status.textContent.indexOf('laid out') >= 0 || status.classList.contains('ga-error')) {
    done([performance.now() - start, status.textContent]);
  } else { setTimeout(wait, 2); }
})();
"""


def browse(rows: list[dict[str, Any]], out: Path) -> None:
    """Open each HTML explorer of *rows* in headless Chromium: time to ready, time to expand a box."""
    import shutil

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--window-size=1400,1000",
        f"--user-data-dir={out / 'profile'}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(
        service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options
    )
    driver.set_script_timeout(120)
    try:
        for row in rows:
            if not row["options"].endswith("html"):
                continue
            opened, expanded = [], []
            for _ in range(row["repeats"]):
                start = time.perf_counter()
                driver.get((out / row["file"]).resolve().as_uri())
                while not driver.execute_script(
                    "return document.querySelector('.ga-app').hasAttribute('data-ready-ms')"
                ):
                    time.sleep(0.005)
                opened.append(time.perf_counter() - start)
                found = driver.execute_async_script(BROWSER_SCRIPT)
                if found:
                    expanded.append(found[0] / 1000)
            row["open_s"] = statistics.median(opened)
            row["expand_s"] = statistics.median(expanded) if expanded else None
    finally:
        driver.quit()


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
            if name.endswith("traced"):
                rows.append(measure(name, synthetic, {}, "html", args.repeats, out))
        rows.append(measure("transformer-24", transformer_report(), {}, "html", args.repeats, out))
        for row in rows:
            row["repeats"] = args.repeats
        if args.browser:
            browse(rows, out)
    return rows


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def format_table(rows: list[dict[str, Any]]) -> str:
    header = (
        f"{'case':<26} {'options':<22} {'graph nodes':>11} {'drawn':>6} {'depth':>5} "
        f"{'DOT s':>7} {'dot s':>7} {'total s':>8} {'KiB':>8} {'size pt':>11} {'open s':>7} {'expand s':>8}"
    )
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append(
            f"{r['case']:<26} {r['options']:<22} {r['graph_nodes']:>11} {r['drawn']:>6} {r['depth']!s:>5} "
            f"{r['dot_text_s']:>7.3f} {r['dot_s']:>7.3f} {r['total_s']:>8.3f} {r['kib']:>8.1f} {r['size_pt']:>11} "
            f"{_seconds(r.get('open_s')):>7} {_seconds(r.get('expand_s')):>8}"
        )
    notes = sorted({n for r in rows for n in r["notes"]})
    lines += [f"note: {n}" for n in notes]
    lines.append(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-traced", action="store_true", help="leave out the traced 5,000-cell capture")
    parser.add_argument("--browser", action="store_true", help="open each HTML explorer in headless Chromium")
    parser.add_argument("--json", type=Path, help="also write the results as JSON")
    args = parser.parse_args(argv)
    rows = run(args)
    print(format_table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    sys.exit(main())
