"""See it: a captured graph, with findings marked, as Graphviz SVG/PNG/PDF/DOT or one HTML file.

- :func:`render_graph` draws a graph (and findings) to a file; ``format="html"`` writes
  one self-contained page, an explorer: the graph opens collapsed to a readable size, every
  box and roll-up opens and closes by clicking (laid out in the page by Graphviz compiled to
  WebAssembly, :mod:`~graphaudit.draw.explorer`), search by path, class or parameter name, a
  details pane, pan and zoom, the findings table linked both ways, filters by severity and
  check, and a tab for each data pipeline;
- :func:`to_dot` returns the DOT source, :func:`graph_svg` / :func:`graph_html` the text.

This package takes a graph and findings, never a report, and never runs MindSpore:
:mod:`graphaudit.report.render` draws reports (with the loss, from the loss-pairing
findings: :class:`~graphaudit.draw.tree.Loss`), and captures networks to draw.

Cells are nested clusters (``depth=`` collapses deeper ones into one box each), the data
flow is labelled with shapes where they change, a cell called several times shows
"(call 2/3)" and "shared params" on each call (its later calls closed: their inside is the
first call's), a shared parameter is drawn once with an edge to each user, the loss after
the output. Large graphs are rolled up ("Bottleneck x6", with a multiplication sign) and,
above ``max_nodes`` drawn nodes, collapsed to a smaller depth. The DOT is written with the
``graphviz`` package's quoting (:mod:`~graphaudit.draw.dot`); ``dot`` is run by
:func:`~graphaudit.draw.engine.run_dot`, which kills it after ``timeout`` seconds. See
``docs/render.md``.

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

from collections.abc import Iterable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import networkx as nx

from graphaudit.draw.dot import Drawing, draw, to_dot
from graphaudit.draw.engine import run_dot
from graphaudit.draw.explorer import explorer_model, model_json, start_dot
from graphaudit.draw.html import Header, Panel, html_page
from graphaudit.draw.marks import targets
from graphaudit.draw.style import KIND_COLORS, SEVERITY_COLORS
from graphaudit.draw.tree import Loss
from graphaudit.errors import ArgumentTypeError, RenderError, RenderTimeoutError
from graphaudit.errors.arguments import check_path
from graphaudit.findings import Finding
from graphaudit.suggest import did_you_mean

__all__ = [
    "FORMATS",
    "KIND_COLORS",
    "SEVERITY_COLORS",
    "Header",
    "Loss",
    "Panel",
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


def _page(
    drawing: Drawing,
    graph: nx.MultiDiGraph,
    header: Header | None,
    page_title: str | None,
    timeout: float | None,
    *,
    max_nodes: int = 1500,
    asked: bool = False,
    panels: Sequence[Panel] = (),
) -> str:
    """The explorer page of *drawing*: its first view laid out here, every other one in the page."""
    title = page_title or f"graphaudit: {drawing.title or 'network'}"
    model = explorer_model(drawing, graph, max_nodes=max_nodes, asked=asked)
    dot, first = start_dot(drawing, model)
    assert drawing.marks is not None
    found, _ = targets(drawing.marks, first)
    for index, finding in enumerate(drawing.findings):  # not in the network: in a pipeline's tab
        if not found[index]:
            found[index] = [t for panel in panels for t in panel.targets.get(finding, ())]
    opened = SimpleNamespace(view=drawing.view, plan=first)  # what the page shows first
    summary = (
        header.text(opened)
        if header is not None
        else f"captured graph, no audit ({drawing.view} view, {first.count} nodes drawn)"
    )
    svg = run_dot(dot, "svg", timeout=timeout, nodes=first.count, depth=first.depth).decode("utf-8")
    in_panels = {f for panel in panels for f in panel.targets}
    unplaced = [f for f in drawing.unplaced if f not in in_panels]
    reduced = drawing.plan.notes if asked else []  # the static drawing's reductions are not the page's
    notes = [*reduced, *(f"not drawn: {f.check_id} {f.subject}" for f in unplaced)]
    return html_page(
        model_json(model),
        svg,
        drawing.findings,
        found,
        title=title,
        summary=summary,
        notes=notes,
        panels=panels,
        reference=drawing.reference,
    )


def _check_options(options: dict[str, Any]) -> None:
    """Refuse a drawing option :func:`~graphaudit.draw.to_dot` does not take, with a "did you mean"."""
    import inspect

    known = [
        name
        for name, p in inspect.signature(draw).parameters.items()
        if p.kind is p.KEYWORD_ONLY
        or (p.kind is p.POSITIONAL_OR_KEYWORD and name not in ("graph", "findings"))
    ]
    known += ["format", "depth", "max_nodes", "timeout", "header", "page_title", "panels"]
    for name in options:
        if name not in known:
            raise ArgumentTypeError(
                f"render() got an unknown drawing option {name!r}{did_you_mean(name, known)} "
                f"(the options are {', '.join(sorted(set(known)))})"
            )


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
    panels: Sequence[Panel] = (),
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
    path = check_path(path, "path", "render()")
    fmt = _format(path, format)
    _check_options(options)
    options.setdefault("title", None)
    if options["title"] is None:
        options["title"] = _root_class(graph)
    drawing = draw(graph, findings, depth=depth, max_nodes=max_nodes, **options)
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "dot":
        path.write_text(drawing.dot, encoding="utf-8")
    elif fmt == "html":
        asked = depth is not None or options.get("rollup") is not None
        page = _page(
            drawing, graph, header, page_title, timeout, max_nodes=max_nodes, asked=asked, panels=panels
        )
        path.write_text(page, encoding="utf-8")
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
    panels: Sequence[Panel] = (),
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
    asked = options.get("depth") is not None or options.get("rollup") is not None
    max_nodes = options.get("max_nodes", 1500)
    drawing = draw(graph, findings, **options)
    return _page(drawing, graph, header, page_title, timeout, max_nodes=max_nodes, asked=asked, panels=panels)
