"""See it: a captured graph, with findings marked, as Graphviz SVG/PNG/PDF/DOT or one HTML file.

- :func:`render_graph` draws a graph (and findings) to a file; ``format="html"`` writes
  one self-contained page (SVG inline, a findings table that highlights the nodes of a
  finding when clicked, filters by severity and check ID);
- :func:`to_dot` returns the DOT source, :func:`graph_svg` / :func:`graph_html` the text.

This package takes a graph and findings, never a report, and never runs MindSpore:
:mod:`graphaudit.report.render` draws reports, and captures networks to draw.

Cells are nested clusters (``depth=`` collapses deeper ones into one box each), the data
flow is labelled with shapes, a cell called several times shows "(call 2/3)" and one
weights node, a shared parameter is drawn once with an edge to each user. Large graphs are
rolled up ("Bottleneck x6", with a multiplication sign) and, above ``max_nodes`` drawn
nodes, collapsed to a smaller depth. The DOT is built with the ``graphviz`` package
(:mod:`~graphaudit.draw.dot`); ``dot`` is run by :func:`~graphaudit.draw.engine.run_dot`,
which kills it after ``timeout`` seconds. See ``docs/render.md``.

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
from graphaudit.draw.engine import run_dot
from graphaudit.draw.html import Header, html_page
from graphaudit.draw.style import KIND_COLORS, SEVERITY_COLORS
from graphaudit.errors import RenderError, RenderTimeoutError
from graphaudit.findings import Finding

__all__ = [
    "FORMATS",
    "KIND_COLORS",
    "SEVERITY_COLORS",
    "Header",
    "RenderError",
    "RenderTimeoutError",
    "graph_html",
    "graph_svg",
    "render_graph",
    "to_dot",
]

FORMATS = ("svg", "png", "pdf", "dot", "html")


def _format(path: Path, fmt: str | None) -> str:
    if fmt is None:
        suffix = path.suffix.lower().lstrip(".")
        fmt = {"htm": "html", "gv": "dot"}.get(suffix, suffix)
        if fmt not in FORMATS:
            raise RenderError(
                f"cannot tell what to write to {path.name!r} from its suffix; name the file "
                f".{', .'.join(FORMATS)}, or pass format= one of {', '.join(FORMATS)}"
            )
    if fmt not in FORMATS:
        raise RenderError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    return fmt


def _run(drawing: Drawing, fmt: str, timeout: float | None) -> bytes:
    return run_dot(drawing.dot, fmt, timeout=timeout, nodes=drawing.plan.count, depth=drawing.plan.depth)


def _root_class(graph: nx.MultiDiGraph) -> str:
    return str(graph.nodes["cell:"]["class_name"]) if "cell:" in graph else "network"


def _page(drawing: Drawing, header: Header | None, page_title: str | None, timeout: float | None) -> str:
    title = page_title or f"graphaudit: {_root_class_of(drawing)}"
    summary = (
        header.text(drawing)
        if header is not None
        else (f"captured graph, no audit ({drawing.view} view, {drawing.plan.count} nodes drawn)")
    )
    return html_page(
        drawing.findings,
        drawing.targets,
        _run(drawing, "svg", timeout).decode("utf-8"),
        title=title,
        summary=summary,
        notes=drawing.plan.notes,
    )


def _root_class_of(drawing: Drawing) -> str:
    return drawing.title or "network"


def render_graph(
    graph: nx.MultiDiGraph,
    path: str | Path,
    findings: Iterable[Finding] = (),
    *,
    format: str | None = None,
    depth: int | None = None,
    max_nodes: int = 1500,
    timeout: float | None = 60.0,
    header: Header | None = None,
    page_title: str | None = None,
    **options: Any,
) -> Path:
    """Draw a captured *graph* (with *findings* marked) to *path*; return the path.

    *format* is ``"svg"``, ``"png"``, ``"pdf"``, ``"dot"`` or ``"html"`` (default: from the
    file suffix; an unknown suffix is an error); *header* is what an HTML page says above the
    drawing (the outcome of an audit), *page_title* its title; *options* are those of
    :func:`~graphaudit.draw.to_dot`.

    Example:
        >>> import graphaudit, tempfile, pathlib
        >>> from mindspore import nn
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "net.dot"
        >>> render_graph(graphaudit.to_networkx(nn.Dense(2, 2)), out).read_text().startswith("digraph")
        True
    """
    path = Path(path)
    fmt = _format(path, format)
    options.setdefault("title", None)
    if options["title"] is None:
        options["title"] = _root_class(graph)
    drawing = draw(graph, findings, depth=depth, max_nodes=max_nodes, **options)
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "dot":
        path.write_text(drawing.dot, encoding="utf-8")
    elif fmt == "html":
        path.write_text(_page(drawing, header, page_title, timeout), encoding="utf-8")
    else:
        path.write_bytes(_run(drawing, fmt, timeout))
    return path


def graph_svg(
    graph: nx.MultiDiGraph, findings: Iterable[Finding] = (), *, timeout: float | None = 60.0, **options: Any
) -> str:
    """*graph* drawn as SVG text, with *findings* marked; *options* as for :func:`to_dot`.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> graph_svg(graphaudit.to_networkx(nn.Dense(2, 2))).lstrip().startswith("<?xml")
        True
    """
    return _run(draw(graph, findings, **options), "svg", timeout).decode("utf-8")


def graph_html(
    graph: nx.MultiDiGraph,
    findings: Iterable[Finding] = (),
    *,
    header: Header | None = None,
    page_title: str | None = None,
    timeout: float | None = 60.0,
    **options: Any,
) -> str:
    """*graph* and *findings* as one self-contained HTML page.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> page = graph_html(graphaudit.to_networkx(nn.Dense(2, 2)))
        >>> page.startswith("<!DOCTYPE html>"), "<svg" in page
        (True, True)
    """
    return _page(draw(graph, findings, **options), header, page_title, timeout)
