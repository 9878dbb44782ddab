"""The training dashboard: one offline HTML page, and the samples as JSON lines.

``dashboard.html`` references nothing outside itself (no script, style sheet, font or image
from anywhere): every chart is SVG drawn here. It shows the loss curves (training at every
step, validation at each evaluation, a known-good run's in grey with ``baseline=``) with the
steps where a watchpoint fired marked on them; per-layer heatmaps over the sampled steps of the gradient's norm and of the update-to-weight
ratio (log10 colour scales); and, for the parameters a finding names and any the user picked
(``layers=``), their distribution over the sampled steps (the 5-95%, 25-75% bands and the
median of the watched values: MindInsight's histogram view, as quantile bands). Every text
is HTML-escaped. ``samples.jsonl`` holds one JSON object per line: a ``run`` header (the
watched parameters, their ``sizes``, every parameter of the ``network``, ``batch_size``, ``every``), a
``step`` per step (loss, epoch, overflow), a ``sample`` per sampled step (per-parameter
norms), a ``validation`` per evaluation and a ``finding`` per finding.

Example:
    >>> import tempfile, pathlib
    >>> from graphaudit.evidence.training import RunRecord
    >>> record = RunRecord(parameters=("w",))
    >>> record.losses.extend([1.0, 0.5]); record.epochs.extend([1, 1])
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> html, lines = write_dashboard(record, None, folder)
    >>> html.name, lines.read_text().splitlines()[1]
    ('dashboard.html', '{"kind": "step", "step": 1, "epoch": 1, "loss": 1.0, "overflow": null}')
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from graphaudit.evidence.training import RunRecord

__all__ = ["samples_lines", "write_dashboard"]

WIDTH, HEIGHT, PAD = 760, 220, 40
_STYLE = (
    "body{font:14px system-ui,sans-serif;margin:24px;color:#222}h2{margin-top:28px}"
    ".f{margin:4px 0}.error{color:#b00020}.warning{color:#a15c00}.info{color:#555}"
    "svg{background:#fafafa;border:1px solid #ddd}text{font-size:11px}"
)


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _json(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    return value


def samples_lines(record: RunRecord, findings: Sequence[Any] = ()) -> list[str]:
    """The samples of *record* (and the *findings*) as JSON lines; see the module docstring."""
    head = {
        "kind": "run",
        "parameters": list(record.parameters),
        "batch_size": record.batch_size,
        "every": record.every,
        "sizes": list(record.sizes),
        "network": list(getattr(record, "network_parameters", ())),
    }
    lines = [head]
    for index, (loss, epoch) in enumerate(zip(record.losses, record.epochs)):
        overflow = record.overflows[index] if index < len(record.overflows) else None
        lines.append(
            {"kind": "step", "step": index + 1, "epoch": epoch, "loss": _json(loss), "overflow": overflow}
        )
    lines += [{"kind": "sample", **{k: _json(v) for k, v in s.to_dict().items()}} for s in record.samples]
    lines += [
        {"kind": "ranks", "step": r.step, "losses": _json(list(r.losses)), "grad_norms": _json(r.grad_norms)}
        for r in getattr(record, "rank_steps", [])
    ]
    lines += [
        {"kind": "validation", "epoch": e, "step": s, "loss": _json(v)} for e, s, v in record.validation
    ]
    lines += [{"kind": "finding", **f.to_dict()} for f in findings]
    return [json.dumps(line, ensure_ascii=False) for line in lines]


def _scale(values: Sequence[float], low: float, high: float) -> Any:
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    return lambda v: low + (v - lo) / span * (high - low)


def _loss_chart(record: RunRecord, marks: dict[int, list[str]], baseline: Sequence[float] = ()) -> str:
    points = [(i + 1, v) for i, v in enumerate(record.losses) if _finite(v) is not None]
    valid = [(s, v) for _, s, v in record.validation if _finite(v) is not None]
    if not points:
        return "<p>No finite loss was recorded.</p>"
    # the baseline's loss (baseline=) over the steps this run trained, in grey behind this run's
    known = [(i + 1, v) for i, v in enumerate(baseline[: len(record.losses)]) if _finite(v) is not None]
    xs = [p[0] for p in points] + [p[0] for p in valid] + [1]
    ys = [p[1] for p in points] + [p[1] for p in valid] + [p[1] for p in known]
    fx, fy = _scale(xs, PAD, WIDTH - 10), _scale(ys, HEIGHT - PAD, 10)
    path = " ".join(f"{fx(s):.1f},{fy(v):.1f}" for s, v in points)
    parts = [f'<svg id="loss" width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="loss curves">']
    if known:
        base = " ".join(f"{fx(s):.1f},{fy(v):.1f}" for s, v in known)
        parts.append(
            f'<polyline class="baseline" fill="none" stroke="#aaa" stroke-width="1.5" points="{base}"/>'
        )
        parts.append(f'<text x="660" y="{HEIGHT - 8}" fill="#888">baseline</text>')
    parts.append(f'<polyline class="train" fill="none" stroke="#1f77b4" stroke-width="1.5" points="{path}"/>')
    if valid:
        vpath = " ".join(f"{fx(s):.1f},{fy(v):.1f}" for s, v in valid)
        parts.append(
            f'<polyline class="valid" fill="none" stroke="#ff7f0e" stroke-width="2" points="{vpath}"/>'
        )
        parts += [
            f'<circle class="valid" cx="{fx(s):.1f}" cy="{fy(v):.1f}" r="3" fill="#ff7f0e"/>'
            for s, v in valid
        ]
    for step, ids in sorted(marks.items()):
        x = fx(min(max(step, 1), max(xs)))
        label = escape(", ".join(ids))
        parts.append(
            f'<line class="hit" x1="{x:.1f}" x2="{x:.1f}" y1="10" y2="{HEIGHT - PAD}" stroke="#b00020" '
            f'stroke-dasharray="4 3"><title>{label} at step {step}</title></line>'
            f'<text x="{x - 3:.1f}" y="20" fill="#b00020" text-anchor="end">{label}</text>'
        )
    parts.append(
        f'<text x="{PAD}" y="{HEIGHT - 8}">step 1 … {max(xs)}; loss {min(ys):.4g} … {max(ys):.4g}</text>'
    )
    parts.append(f'<text x="500" y="{HEIGHT - 8}" fill="#1f77b4">training</text>')
    if valid:
        parts.append(f'<text x="580" y="{HEIGHT - 8}" fill="#ff7f0e">validation</text>')
    return "".join(parts) + "</svg>"


#: One colour per rank's curve (repeating past eight ranks).
_RANK_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f")


def _ranks_section(record: RunRecord) -> str:
    """Every rank's loss at the sampled steps (one curve each) and a table: the ranks side by side."""
    steps = list(getattr(record, "rank_steps", []))
    if not steps:
        return ""
    world = len(steps[0].losses)
    curves = [[(s.step, v) for s in steps if (v := _finite(s.losses[r])) is not None] for r in range(world)]
    found = [p for curve in curves for p in curve]
    if not found:
        return "<h2>Ranks</h2><p>No finite loss was gathered from the ranks.</p>"
    fx = _scale([p[0] for p in found] + [steps[0].step + 1], PAD, WIDTH - 10)
    fy = _scale([p[1] for p in found], HEIGHT - PAD, 10)
    parts = [
        f'<svg id="rank-losses" width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="loss per rank">'
    ]
    for rank, curve in enumerate(curves):
        colour = _RANK_COLOURS[rank % len(_RANK_COLOURS)]
        points = " ".join(f"{fx(x):.1f},{fy(y):.1f}" for x, y in curve)
        parts.append(
            f'<polyline class="rank" data-rank="{rank}" fill="none" stroke="{colour}" stroke-width="1.5" '
            f'points="{points}"><title>rank {rank}</title></polyline>'
        )
        parts.append(f'<text x="{PAD + 60 * rank}" y="{HEIGHT - 8}" fill="{colour}">rank {rank}</text>')
    parts.append("</svg>")
    rows = []
    for rank, curve in enumerate(curves):
        mean = f"{sum(v for _, v in curve) / len(curve):.4g}" if curve else "-"
        last = f"{curve[-1][1]:.4g}" if curve else "-"
        norm = steps[-1].grad_norms[rank] if steps[-1].grad_norms is not None else None
        rows.append(
            f"<tr><td>{rank}</td><td>{mean}</td><td>{last}</td><td>{'-' if norm is None else f'{norm:.4g}'}</td></tr>"
        )
    table = (
        '<table id="rank-table"><tr><th>rank</th><th>mean loss</th><th>last loss</th>'
        f"<th>last gradient norm</th></tr>{''.join(rows)}</table>"
    )
    return (
        f"<h2>Ranks</h2><p>{world} ranks, their losses all-gathered at {len(steps)} sampled steps.</p>"
        + "".join(parts)
        + table
    )


def _colour(fraction: float) -> str:
    """Dark blue (0) to yellow (1), a viridis-like ramp."""
    fraction = min(max(fraction, 0.0), 1.0)
    r, g, b = int(68 + 185 * fraction), int(1 + 230 * fraction), int(84 + (37 - 84) * fraction)
    return f"rgb({r},{g},{b})"


def _heatmap(chart_id: str, record: RunRecord, value: Any) -> str:
    """Rows: parameters; columns: sampled steps; colour: log10 of *value(sample, position)*."""
    cells, logs = [], []
    for column, sample in enumerate(record.samples):
        for row in range(len(record.parameters)):
            v = _finite(value(sample, row))
            if v is not None and v > 0:
                logs.append(math.log10(v))
                cells.append((column, row, math.log10(v)))
            else:
                cells.append((column, row, None))
    if not record.samples or not logs:
        return f'<p id="{chart_id}">Nothing was sampled.</p>'
    lo, hi = min(logs), max(logs)
    label_width = 180
    width = max(1.0, (WIDTH - label_width) / len(record.samples))
    height = 14
    parts = [f'<svg id="{chart_id}" width="{WIDTH}" height="{height * len(record.parameters) + 30}">']
    for row, name in enumerate(record.parameters):
        parts.append(f'<text x="2" y="{row * height + 11}">{escape(name[-28:])}</text>')
    for column, row, log in cells:
        fill = "#ddd" if log is None else _colour((log - lo) / ((hi - lo) or 1.0))
        title = (
            ""
            if log is None
            else f"<title>{escape(record.parameters[row])} step {record.samples[column].step}: 1e{log:.2f}</title>"
        )
        parts.append(
            f'<rect class="cell" x="{label_width + column * width:.2f}" y="{row * height}" width="{width + 0.3:.2f}" '
            f'height="{height - 1}" fill="{fill}">{title}</rect>'
        )
    parts.append(
        f'<text x="{label_width}" y="{height * len(record.parameters) + 20}">log10 from {lo:.2f} (dark) '
        f"to {hi:.2f} (yellow); grey: none</text>"
    )
    return "".join(parts) + "</svg>"


def _distribution(record: RunRecord, position: int) -> str:
    rows = [
        (s.step, np.asarray(s.values[position], np.float64))
        for s in record.samples
        if position < len(s.values)
    ]
    rows = [(step, v[np.isfinite(v)]) for step, v in rows]
    rows = [(step, v) for step, v in rows if v.size]
    name = escape(record.parameters[position])
    if not rows:
        return f"<p>{name}: no values sampled.</p>"
    bands = [(step, *np.percentile(v, [5, 25, 50, 75, 95])) for step, v in rows]
    xs = [b[0] for b in bands] + [bands[0][0] + 1]
    ys = [q for b in bands for q in b[1:]]
    fx, fy = _scale(xs, PAD, WIDTH - 10), _scale(ys, 150 - 20, 10)

    def area(lo: int, hi: int) -> str:
        top = [f"{fx(b[0]):.1f},{fy(b[hi]):.1f}" for b in bands]
        bottom = [f"{fx(b[0]):.1f},{fy(b[lo]):.1f}" for b in reversed(bands)]
        return " ".join(top + bottom)

    return (
        f'<h3>{name}</h3><svg class="dist" width="{WIDTH}" height="150">'
        f'<polygon points="{area(1, 5)}" fill="#c6dbef"/><polygon points="{area(2, 4)}" fill="#6baed6"/>'
        f'<polyline fill="none" stroke="#08306b" points="{" ".join(f"{fx(b[0]):.1f},{fy(b[3]):.1f}" for b in bands)}"/>'
        f'<text x="{PAD}" y="145">steps {bands[0][0]} … {bands[-1][0]}; values {min(ys):.3g} … {max(ys):.3g} '
        "(5-95%, 25-75%, median)</text></svg>"
    )


def _hit_steps(record: RunRecord, findings: Sequence[Any]) -> dict[int, list[str]]:
    marks: dict[int, list[str]] = {}
    for finding in findings:
        step = record.steps
        if finding.check_id == "GA950" and record.non_finite is not None:
            step = record.non_finite.step
        marks.setdefault(step, []).append(finding.check_id)
    return marks


def dashboard_html(
    record: RunRecord, report: Any, *, layers: Sequence[str] = (), baseline: Sequence[float] = ()
) -> str:
    """The page (see the module docstring) for *record* and the watchpoints' *report* (or ``None``).

    *baseline* is the loss of every step of the known-good run (``baseline=``), drawn in grey.
    """
    findings = list(report.findings) if report is not None else []
    named = [n for f in findings for n in f.subjects if n in record.parameters]
    picked = [n for n in record.parameters if n in {*named, *layers}]
    listing = (
        "".join(
            f'<div class="f {escape(f.severity)}"><b>{escape(f.check_id)} {escape(f.name)}</b> [{escape(f.severity)}] '
            f"{escape(f.subject)}: {escape(f.message)} <i>Fix: {escape(f.fix)}</i></div>"
            for f in findings
        )
        or "<p>No watchpoint fired.</p>"
    )
    not_run = "".join(f"<li>{escape(n.text())}</li>" for n in (report.not_run if report is not None else []))
    summary = escape(report.summary()) if report is not None else "not judged"
    body = [
        f"<h1>graphaudit training watch</h1><p id='summary'>{record.steps} steps, {len(record.samples)} sampled "
        f"(every {record.every}); {summary}</p>",
        f"<h2>Findings</h2><div id='findings'>{listing}</div>",
        f"<h2>Loss</h2>{_loss_chart(record, _hit_steps(record, findings), baseline)}",
        _ranks_section(record),
        "<h2>Gradient norm per layer</h2>",
        _heatmap("grad-heatmap", record, lambda s, p: s.grad_norms[p] if s.grad_norms else None),
        "<h2>Update-to-weight ratio per layer</h2>",
        _heatmap("ratio-heatmap", record, lambda s, p: s.ratio(p)),
        "<h2>Parameter distributions</h2>",
        "".join(_distribution(record, record.parameters.index(n)) for n in picked)
        or "<p>No layer named: pass layers=[...] to see one.</p>",
    ]
    if not_run:
        body.append(f"<h2>Not run</h2><ul>{not_run}</ul>")
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>graphaudit training watch</title>"
        f"<style>{_STYLE}</style></head><body>{''.join(body)}</body></html>"
    )


def write_dashboard(
    record: RunRecord,
    report: Any,
    out: str | Path,
    *,
    layers: Sequence[str] = (),
    baseline: Sequence[float] = (),
) -> tuple[Path, Path]:
    """Write ``dashboard.html`` and ``samples.jsonl`` into the folder *out*; their paths."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    html = folder / "dashboard.html"
    html.write_text(dashboard_html(record, report, layers=layers, baseline=baseline), encoding="utf-8")
    lines = folder / "samples.jsonl"
    findings = list(report.findings) if report is not None else []
    lines.write_text("\n".join(samples_lines(record, findings)) + "\n", encoding="utf-8")
    return html, lines
