"""Draw a report, or a network without an audit: the bridge from the pipeline to :mod:`graphaudit.draw`.

:mod:`graphaudit.draw` draws a graph and findings and knows nothing of reports or of
MindSpore; this module hands it a report's graph, findings and header, the loss the network
is trained with (:func:`loss_of`: the report's graph has no loss node, so the loss box is
drawn from what the loss-pairing findings say), the report's data pipelines when it has
any (:func:`pipeline_panels`), or captures a network first (:func:`render`).

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
from typing import TYPE_CHECKING, Any

from graphaudit import graph as g
from graphaudit.draw import Header, Loss, Panel, graph_html, graph_svg, render_graph
from graphaudit.draw.divergence import Divergence, Shade
from graphaudit.errors.arguments import check_path, checked_call

if TYPE_CHECKING:  # the package face imports this module when a report is drawn: no import back
    from graphaudit.report import Report

__all__ = [
    "divergence_of",
    "header",
    "loss_of",
    "pipeline_panels",
    "render",
    "render_graph",
    "render_report",
    "report_html",
    "report_svg",
]

LOSS_FAMILY = "GA4"  # the loss-pairing checks: their subject is the loss class


def header(report: Report) -> Header:
    """What the HTML page says above the drawing: the outcome, and each check that did not run with its reason.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> found = header(graphaudit.audit(nn.Dense(3, 2)))
        >>> reason = dict(found.not_run)["GA103"]
        >>> found.ok, reason.startswith("GA103 declared-shared-not-shared needs a declared design")
        (True, True)
    """
    return Header(
        ok=report.ok,
        counts=report.counts(),
        checks_run=len(report.checks_run),
        not_run=[(n.check_id, n.text()) for n in report.not_run],
    )


def loss_of(report: Report) -> Loss | None:
    """The loss to draw after the network's outputs, or ``None`` when the report does not say.

    The report's graph is the network's alone. A loss-pairing finding (``GA4xx``) names the
    loss class as its subject, and its nodes include the output the loss reads; a report
    that carries the loss's name itself (a ``loss`` attribute) is used first.

    Example:
        >>> import graphaudit, numpy as np
        >>> from mindspore import nn, ops, Tensor
        >>> class Net(nn.Cell):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = nn.Dense(3, 1)
        ...     def construct(self, x):
        ...         return ops.sigmoid(self.fc(x))
        >>> report = graphaudit.audit(Net(), inputs=(Tensor(np.ones((2, 3), np.float32)),), loss_fn=nn.BCEWithLogitsLoss())
        >>> loss_of(report)
        Loss(name='BCEWithLogitsLoss', inputs=('output:0',))
    """
    about = [
        f for f in report.findings if any(c.startswith(LOSS_FAMILY) for c in (f.check_id, *f.confirmed_by))
    ]
    name = getattr(report, "loss", None) or next((f.subject for f in about), None)
    if not isinstance(name, str) or not name:
        return None
    outputs = [n for f in about for n in f.nodes if report.graph.nodes.get(n, {}).get("kind") == g.OUTPUT]
    return Loss(name, tuple(dict.fromkeys(outputs)) or ("output:0",))


def pipeline_panels(report: Report, timeout: float | None = 60.0) -> list[Panel]:
    """The report's data pipelines (``report.datasets``), each drawn for a tab of its own with its findings.

    A report without pipelines (or a package without :mod:`graphaudit.draw.pipeline`) gives none.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> pipeline_panels(graphaudit.audit(nn.Dense(3, 2)))
        []
    """
    datasets = getattr(report, "datasets", None) or {}
    if not datasets:
        return []
    try:
        from graphaudit.draw import pipeline
    except ImportError:  # pragma: no cover - the pipeline drawing ships with the package
        return []
    panels = []
    for name, graph in dict(datasets).items():
        svg = pipeline.pipeline_svg(graph, report.findings, timeout=timeout or 60.0)
        found = pipeline.pipeline_targets(graph, report.findings)
        targets = {f: ids for f, ids in zip(report.findings, found) if ids}
        panels.append(Panel(f"data pipeline '{name}'", svg, targets))
    return panels


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.6f}" if 0.99 < value <= 1 else f"{value:.3g}"


def _ratio(row: dict[str, Any]) -> float | None:
    """A call's largest error over its dtype's tolerance; ``inf`` for tensors of other shapes, ``None`` for none."""
    from graphaudit.capture.reference.compare import TOLERANCE

    if not row["compared"]:
        return float("inf") if row["shapes"] or row["first"] else None
    if row["max_abs"] is None or row["scale"] is None:
        return float("nan")  # a port output that is not finite
    tolerance = TOLERANCE.get(row["dtype"], TOLERANCE["float32"]) * max(row["scale"], 1.1754944e-38)
    return row["max_abs"] / tolerance


def divergence_of(report: Report) -> Divergence | None:
    """What the drawing shows of ``report.reference`` (a port's comparison with its original), or ``None``.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> divergence_of(graphaudit.audit(nn.Dense(3, 2))) is None
        True
    """
    section = getattr(report, "reference", None)
    if not section:
        return None
    rows = section.get("cells", [])
    calls, table = {}, []
    for row in rows:
        name = row["port"] or "(root)"
        original = row["reference"] or "(root)"
        figures = f"cosine {_figure(row['cosine'])}, max abs {_figure(row['max_abs'])}, max rel {_figure(row['max_rel'])}"
        if not row["compared"]:
            figures = f"not comparable: {row['shapes'] or 'no tensor of one shape'}"
        said = "diverges" if row["diverges"] or (row["first"] and not row["compared"]) else "agrees"
        lines = (f"against the original's {original} (call {row['call'] + 1}): {figures}; {said}",)
        calls[(row["port"], row["call"])] = Shade(_ratio(row), lines)
        table.append(
            (
                f"{name} ({row['call'] + 1})",
                original,
                _figure(row["cosine"]),
                _figure(row["max_abs"]),
                _figure(row["max_rel"]),
                "agrees" if row["input_agrees"] else "differs",
                "first" if row["first"] else "",
            )
        )
    mapping = section["mapping"]
    pairs = [(p["port"], p["reference"], p["how"], p["layout"]) for p in mapping["pairs"]]
    pairs += [(name, "-", "unmatched", "") for name in mapping["port_only"]]
    pairs += [("-", name, "unmatched", "") for name in mapping["reference_only"]]
    first = section.get("first_divergence")
    notes = []
    if first is not None:
        notes.append(
            f"First divergence: the {first['at']} of {first['port'] or '(root)'} (call {first['call'] + 1}), "
            f"made in {first['cell'] or '(root)'}."
        )
    elif section["compared"]:
        notes.append("Every compared cell call agrees with the original.")
    if not section["compared"]:
        notes.append(f"Outputs not compared: {section['not_compared']}.")
    return Divergence(
        calls,
        (first["cell"], first["cell_call"]) if first is not None else None,
        frozenset(section.get("unmatched_cells", ())),
        tuple(table),
        tuple(pairs),
        tuple(notes),
    )


def _options(report: Report, options: dict[str, Any]) -> dict[str, Any]:
    options.setdefault("title", report.network or None)
    options.setdefault("loss", loss_of(report))
    divergence = divergence_of(report)
    if divergence is not None:  # only with a reference: other drawings are passed what they always were
        options.setdefault("reference", divergence)
    return options


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
    html = str(options.get("format") or Path(path).suffix.lstrip(".")).lower() in ("html", "htm")
    panels = pipeline_panels(report, options.get("timeout", 60.0)) if html else []
    return render_graph(
        report.graph,
        path,
        report.findings,
        header=header(report),
        page_title=f"graphaudit report: {report.network}",
        panels=panels,
        **_options(report, options),
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
    return graph_svg(report.graph, report.findings, **_options(report, options))


def report_html(report: Report, **options: Any) -> str:
    """*report* as one self-contained HTML page, the explorer (for ``Report._repr_html_``).

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> page = report_html(graphaudit.audit(nn.Dense(3, 2)))
        >>> page.startswith("<!DOCTYPE html>"), "graphaudit report: Dense" in page, "No findings." in page
        (True, True, True)
    """
    return graph_html(
        report.graph,
        report.findings,
        header=header(report),
        page_title=f"graphaudit report: {report.network}",
        panels=pipeline_panels(report, options.get("timeout", 60.0)),
        **_options(report, options),
    )


@checked_call
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

    check_path(path, "path", "render()")  # before the capture, which can take a while
    return render_graph(to_networkx(net, inputs=inputs), path, **options)
