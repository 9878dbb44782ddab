"""Draw a report, or a network without an audit: the bridge from the pipeline to :mod:`graphaudit.draw`.

:mod:`graphaudit.draw` draws a graph and findings and knows nothing of reports or of
MindSpore; this module hands it a report's graph, findings and header, or captures a network
first (:func:`render`).

Example:
    >>> import graphaudit, tempfile, pathlib
    >>> from mindspore import nn
    >>> block = nn.Dense(2, 2)
    >>> report = graphaudit.audit(nn.SequentialCell([block, block]))
    >>> out = render_report(report, pathlib.Path(tempfile.mkdtemp()) / "report.dot")
    >>> "GA101" in out.read_text()
    True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphaudit.draw import Header, graph_html, graph_svg, render_graph
from graphaudit.report import Report

__all__ = ["header", "render", "render_graph", "render_report", "report_html", "report_svg"]


def header(report: Report) -> Header:
    """What the HTML page says above the drawing: the outcome, and each check that did not run with its reason.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> found = header(graphaudit.audit(nn.Dense(3, 2)))
        >>> found.ok, found.not_run[0][0], found.not_run[0][1].startswith("GA103 declared-shared-not-shared needs")
        (True, 'GA103', True)
    """
    return Header(
        ok=report.ok,
        counts=report.counts(),
        checks_run=len(report.checks_run),
        not_run=[(n.check_id, n.text()) for n in report.not_run],
    )


def render_report(report: Report, path: str | Path, **options: Any) -> Path:
    """Draw *report*'s graph with every finding marked, to *path* (``.html``: the report page).

    *options* are those of :func:`graphaudit.draw.render_graph` (``format``, ``depth``...).

    Example:
        >>> import graphaudit, tempfile, pathlib
        >>> from mindspore import nn
        >>> block = nn.Dense(2, 2)
        >>> report = graphaudit.audit(nn.SequentialCell([block, block]))
        >>> page = render_report(report, pathlib.Path(tempfile.mkdtemp()) / "report.html").read_text()
        >>> "<svg" in page, "FAILED: 1 error, 0 warnings, 0 info" in page, "did not run</summary>" in page
        (True, True, True)
    """
    options.setdefault("title", report.network or None)
    return render_graph(
        report.graph,
        path,
        report.findings,
        header=header(report),
        page_title=f"graphaudit report: {report.network}",
        **options,
    )


def report_svg(report: Report, **options: Any) -> str:
    """*report* drawn as SVG text (for ``Report._repr_svg_``); *options* as for :func:`graphaudit.draw.to_dot`.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> block = nn.Dense(2, 2)
        >>> svg = report_svg(graphaudit.audit(nn.SequentialCell([block, block])))
        >>> svg.lstrip().startswith("<?xml"), "[GA101]" in svg
        (True, True)
    """
    options.setdefault("title", report.network or None)
    return graph_svg(report.graph, report.findings, **options)


def report_html(report: Report, **options: Any) -> str:
    """*report* as one self-contained HTML page (for ``Report._repr_html_``).

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> page = report_html(graphaudit.audit(nn.Dense(3, 2)))
        >>> page.startswith("<!DOCTYPE html>"), "graphaudit report: Dense" in page, "No findings." in page
        (True, True, True)
    """
    options.setdefault("title", report.network or None)
    return graph_html(
        report.graph,
        report.findings,
        header=header(report),
        page_title=f"graphaudit report: {report.network}",
        **options,
    )


def render(net: Any, path: str | Path, *, inputs: Any = None, **options: Any) -> Path:
    """Capture *net* (one traced forward pass with *inputs*) and draw it to *path*, without an audit.

    Example:
        >>> import tempfile, pathlib
        >>> from mindspore import nn
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "net.dot"
        >>> print(render(nn.SequentialCell([nn.ReLU()]), out).read_text().splitlines()[0])
        digraph graphaudit {
    """
    from graphaudit.capture import to_networkx

    return render_graph(to_networkx(net, inputs=inputs), path, **options)
