"""See it: a captured graph or an audit report as Graphviz SVG/PNG/PDF/DOT or one HTML file.

- :func:`render_report` draws a :class:`~graphaudit.report.Report` with its findings marked;
  ``format="html"`` writes one self-contained page (SVG inline, a findings table that
  highlights the nodes of a finding when clicked, filters by severity and check ID).
- :func:`render` captures a network (``inputs=`` for the traced view) and draws it.
- :func:`to_dot` returns the DOT source, :func:`report_svg` / :func:`report_html` the text.

Cells are nested clusters (``depth=`` collapses deeper ones into one box each), the data
flow is labelled with shapes, a cell called several times shows "(call 2/3)" and one
weights node, a shared parameter is drawn once with an edge to each user. Large graphs are
rolled up ("Bottleneck x6", with a multiplication sign) and, above ``max_nodes`` drawn nodes, collapsed to a smaller
depth; ``dot`` runs with a ``timeout``. See ``docs/render.md``.

Example:
    >>> import graphaudit
    >>> from graphaudit.draw import to_dot
    >>> from mindspore import nn
    >>> block = nn.Dense(2, 2)
    >>> report = graphaudit.audit(nn.SequentialCell([block, block]))
    >>> "[GA101]" in to_dot(report.graph, report.findings)
    True
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import networkx as nx

from graphaudit.draw.dot import Drawing, draw, to_dot
from graphaudit.draw.engine import RenderError, RenderTimeoutError, run_dot
from graphaudit.draw.html import html_page
from graphaudit.draw.style import KIND_COLORS, SEVERITY_COLORS
from graphaudit.findings import SEVERITIES, Finding
from graphaudit.report import Report

__all__ = [
    "FORMATS",
    "KIND_COLORS",
    "SEVERITY_COLORS",
    "RenderError",
    "RenderTimeoutError",
    "render",
    "render_graph",
    "render_report",
    "report_html",
    "report_svg",
    "to_dot",
]

FORMATS = ("svg", "png", "pdf", "dot", "html")


def _format(path: Path, fmt: str | None) -> str:
    if fmt is None:
        suffix = path.suffix.lower().lstrip(".")
        fmt = {"htm": "html", "gv": "dot"}.get(suffix, suffix)
        fmt = fmt if fmt in FORMATS else "svg"
    if fmt not in FORMATS:
        raise RenderError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    return fmt


def _svg(drawing: Drawing, timeout: float | None) -> str:
    return _run(drawing, "svg", timeout).decode("utf-8")


def _run(drawing: Drawing, fmt: str, timeout: float | None) -> bytes:
    return run_dot(drawing.dot, fmt, timeout=timeout, nodes=drawing.plan.count, depth=drawing.plan.depth)


def _summary(report: Report | None, drawing: Drawing) -> str:
    if report is None:
        return f"captured graph, no audit ({drawing.view} view, {drawing.plan.count} nodes drawn)"
    counts = ", ".join(f"{len(report.of_severity(s))} {s}" for s in SEVERITIES)
    text = f"{'OK' if report.ok else 'FAILED'}: {counts}; {len(report.checks_run)} checks run"
    if report.skipped:
        text += f", {len(report.skipped)} not run ({', '.join(sorted(report.skipped))}: they need inputs=...)"
    return text + f"; {drawing.view} view, {drawing.plan.count} nodes drawn"


def _page(drawing: Drawing, title: str, report: Report | None, timeout: float | None) -> str:
    return html_page(
        drawing.findings,
        drawing.targets,
        _svg(drawing, timeout),
        title=title,
        summary=_summary(report, drawing),
        notes=drawing.plan.notes,
    )


def _write(
    drawing: Drawing, path: Path, fmt: str, title: str, report: Report | None, timeout: float | None
) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "dot":
        path.write_text(drawing.dot, encoding="utf-8")
    elif fmt == "html":
        path.write_text(_page(drawing, title, report, timeout), encoding="utf-8")
    else:
        path.write_bytes(_run(drawing, fmt, timeout))
    return path


def render_graph(
    graph: nx.MultiDiGraph,
    path: str | Path,
    findings: Iterable[Finding] = (),
    *,
    format: str | None = None,
    depth: int | None = None,
    max_nodes: int = 1500,
    timeout: float | None = 60.0,
    **options: Any,
) -> Path:
    """Draw a captured *graph* (with *findings* marked) to *path*; return the path.

    *format* is ``"svg"``, ``"png"``, ``"pdf"``, ``"dot"`` or ``"html"`` (default: from
    the file suffix, else SVG); *options* are those of :func:`~graphaudit.draw.to_dot`.

    Example:
        >>> import graphaudit, tempfile, pathlib
        >>> from mindspore import nn
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "net.dot"
        >>> render_graph(graphaudit.to_networkx(nn.Dense(2, 2)), out).read_text().startswith("digraph")
        True
    """
    path = Path(path)
    drawing = draw(graph, findings, depth=depth, max_nodes=max_nodes, **options)
    title = f"graphaudit: {options.get('title') or _root_class(graph)}"
    return _write(drawing, path, _format(path, format), title, None, timeout)


def _root_class(graph: nx.MultiDiGraph) -> str:
    return str(graph.nodes["cell:"]["class_name"]) if "cell:" in graph else "network"


def render(
    net: Any,
    path: str | Path,
    *,
    inputs: Any = None,
    format: str | None = None,
    depth: int | None = None,
    max_nodes: int = 1500,
    timeout: float | None = 60.0,
    **options: Any,
) -> Path:
    """Capture *net* (one traced forward pass with *inputs*) and draw it to *path*, without audit.

    Example:
        >>> import tempfile, pathlib
        >>> from mindspore import nn
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "net.dot"
        >>> print(render(nn.SequentialCell([nn.ReLU()]), out).read_text().splitlines()[0])
        digraph graphaudit {
    """
    from graphaudit.capture import to_networkx

    graph = to_networkx(net, inputs=inputs)
    return render_graph(
        graph, path, format=format, depth=depth, max_nodes=max_nodes, timeout=timeout, **options
    )


def render_report(
    report: Report,
    path: str | Path,
    *,
    format: str | None = None,
    depth: int | None = None,
    max_nodes: int = 1500,
    timeout: float | None = 60.0,
    **options: Any,
) -> Path:
    """Draw *report*'s graph with every finding marked, to *path* (``format="html"``: the report page).

    Example:
        >>> import graphaudit, tempfile, pathlib
        >>> from mindspore import nn
        >>> block = nn.Dense(2, 2)
        >>> report = graphaudit.audit(nn.SequentialCell([block, block]))
        >>> out = render_report(report, pathlib.Path(tempfile.mkdtemp()) / "report.dot")
        >>> "GA101" in out.read_text()
        True
    """
    path = Path(path)
    options.setdefault("title", report.network or None)
    drawing = draw(report.graph, report.findings, depth=depth, max_nodes=max_nodes, **options)
    title = f"graphaudit report: {report.network}"
    return _write(drawing, path, _format(path, format), title, report, timeout)


def report_svg(report: Report, *, timeout: float | None = 60.0, **options: Any) -> str:
    """*report* drawn as SVG text (for ``Report._repr_svg_``); *options* as for :func:`to_dot`.

    Example:
        >>> callable(report_svg)  # needs Graphviz's dot: see render_report for a DOT example
        True
    """
    options.setdefault("title", report.network or None)
    return _svg(draw(report.graph, report.findings, **options), timeout)


def report_html(report: Report, *, timeout: float | None = 60.0, **options: Any) -> str:
    """*report* as one self-contained HTML page (for ``Report._repr_html_``).

    Example:
        >>> callable(report_html)  # needs Graphviz's dot: see render_report for a DOT example
        True
    """
    options.setdefault("title", report.network or None)
    drawing = draw(report.graph, report.findings, **options)
    return _page(drawing, f"graphaudit report: {report.network}", report, timeout)
