"""The result of an audit: findings, the annotated graph, and what could not be checked.

The last stage of the pipeline (capture → evidence → checks → report/draw). A
:class:`Report` has a text form (``str(report)``, :meth:`Report.text` for the command
line's wording), a JSON form (:meth:`Report.to_json`, ``schema/report.schema.json``), a SARIF
form (:mod:`graphaudit.report.sarif`) and drawings (:meth:`Report.render`, through
:mod:`graphaudit.draw`).

Example:
    >>> import graphaudit
    >>> from mindspore import nn
    >>> net = nn.Dense(3, 2)
    >>> report = graphaudit.audit(net, nn.SGD(net.trainable_params()))
    >>> report.ok
    True
    >>> print(next(n for n in report.not_run if n.check_id == "GA103").text())
    GA103 declared-shared-not-shared needs a declared design: pass spec=graphaudit.Spec(...) or spec=graphaudit.Spec.load('design.toml')
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphaudit.errors.arguments import checked_call
from graphaudit.findings import SEVERITIES, Finding, plural, printable, severity_rank

if TYPE_CHECKING:
    import networkx as nx

    from graphaudit.capture.network.structure import Structure

__all__ = ["JSON_SCHEMA_VERSION", "NotRun", "Report", "Suppressed"]

JSON_SCHEMA_VERSION = 2
AUDIENCES = ("python", "cli")
_LIST_NOT_RUN = {
    "python": "report.not_run, or report.text(not_run=True)",
    "cli": "graphaudit audit ... --show-not-run",
}
SUBJECTS_SHOWN = 5  # a group's subjects in the text; JSON and SARIF list them all


@dataclass(frozen=True)
class NotRun:
    """A check that could not run: the evidence it needs, how to provide it, or why it could not be made."""

    check_id: str
    name: str
    needs: str
    python: str
    cli: str
    reason: str | None = None

    def text(self, audience: str = "python") -> str:
        """Why the check did not run, worded for ``"python"`` (``audit()``) or ``"cli"`` (``graphaudit audit``)."""
        return f"{self.check_id} {self.name} needs {self.why(audience)}"

    def why(self, audience: str = "python") -> str:
        """What the check needs and how to provide it (or why it could not be made), without its name."""
        if audience not in AUDIENCES:
            raise ValueError(f"audience must be one of {AUDIENCES}, got {audience!r}")
        if self.reason is not None:
            return f"{self.needs}, which could not be made: {self.reason}"
        return f"{self.needs}: {self.python if audience == 'python' else self.cli}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "check_id": self.check_id,
            "name": self.name,
            "needs": self.needs,
            "python": self.python,
            "cli": self.cli,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Suppressed:
    """A finding the configuration hides (``[tool.graphaudit]``, ``audit(ignore=...)``), and why."""

    finding: Finding
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"finding": self.finding.to_dict(), "reason": self.reason}


@dataclass
class Report:
    """What :func:`graphaudit.audit` found.

    ``findings`` are in a deterministic order (severity, check ID, subject); ``graph`` is the
    captured graph, as the capture made it (:meth:`annotated` gives a copy with each finding
    attached to its nodes, for GraphML); ``not_run`` lists every check that
    could not run with the reason (``skipped`` is the same as ``{ID: reason}``);
    ``structure`` holds the network's objects behind the graph's nodes (``None`` for a report
    rebuilt from a graph); ``unwrapped`` names the training wrappers ``network`` was found in
    (``("Model", "TrainOneStepCell", "WithLossCell")``), outermost first. ``datasets`` holds
    the graphs of the data pipelines audited (``"train"``, ``"eval"``; see
    :mod:`graphaudit.graph.pipeline`; ``annotated(name)`` marks the findings whose subjects
    name a node; empty when no pipeline was audited). ``reference`` is the port's comparison
    with the original it was ported from (``audit(..., reference=...)``; ``None`` without
    one): the mapping and, when the outputs were compared, a row per cell call with its
    figures (:func:`graphaudit.report.port.reference_section`).
    """

    findings: list[Finding]
    graph: nx.MultiDiGraph
    checks_run: list[str] = field(default_factory=list)
    not_run: list[NotRun] = field(default_factory=list)
    network: str = ""
    structure: Structure | None = field(default=None, repr=False, compare=False)
    unwrapped: tuple[str, ...] = ()
    datasets: dict[str, nx.MultiDiGraph] = field(default_factory=dict, repr=False, compare=False)
    suppressed: list[Suppressed] = field(default_factory=list)
    reference: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.findings = sorted(self.findings, key=Finding.sort_key)
        self.not_run = sorted(self.not_run, key=lambda n: n.check_id)

    def annotated(self, dataset: str | None = None) -> nx.MultiDiGraph:
        """A copy of the network's graph (or of the pipeline *dataset*) with the findings on its nodes.

        Each node a finding concerns gets the attributes ``findings`` (the check IDs, as JSON
        text) and ``severity`` (the worst one), so that ``networkx.write_graphml`` keeps them;
        ``report.graph`` itself stays as the capture made it.

        Example:
            >>> import graphaudit
            >>> from mindspore import nn
            >>> block = nn.Dense(2, 2)
            >>> report = graphaudit.audit(nn.SequentialCell([block, block]))
            >>> graph = report.annotated()
            >>> graph.nodes["cell:0"]["findings"], "findings" in report.graph.nodes["cell:0"]
            ('["GA101"]', False)
        """
        graph = (self.graph if dataset is None else self.datasets[dataset]).copy()
        if dataset is None:
            on_node: dict[str, list[Finding]] = {}
            for finding in self.findings:
                for node in finding.nodes:
                    if node in graph:
                        on_node.setdefault(node, []).append(finding)
        else:
            from graphaudit.graph.pipeline import findings_on_pipeline

            on_node = findings_on_pipeline(graph, self.findings)
        for node, found in on_node.items():
            graph.nodes[node]["findings"] = json.dumps(sorted({f.check_id for f in found}))
            graph.nodes[node]["severity"] = min((f.severity for f in found), key=severity_rank)
        return graph

    @property
    def ok(self) -> bool:
        """True when no finding has severity ``error``."""
        return not any(f.severity == "error" for f in self.findings)

    @property
    def skipped(self) -> dict[str, str]:
        """The ID of each check that could not run, with the reason (worded for Python)."""
        return {n.check_id: n.text() for n in self.not_run}

    def counts(self) -> dict[str, int]:
        """The number of findings of each severity.

        Example:
            >>> import graphaudit
            >>> from mindspore import nn
            >>> graphaudit.audit(nn.Dense(3, 2)).counts()
            {'error': 0, 'warning': 0, 'info': 0}
        """
        return {s: len(self.of_severity(s)) for s in SEVERITIES}

    def of_severity(self, *severities: str) -> list[Finding]:
        """The findings of the given severities."""
        return [f for f in self.findings if f.severity in severities]

    def by_check(self, check_id: str) -> list[Finding]:
        """The findings of one check: those it made, and those it confirmed (``confirmed_by``).

        Example:
            >>> import graphaudit
            >>> from mindspore import nn
            >>> graphaudit.audit(nn.Dense(3, 2)).by_check("GA201")
            []
        """
        return [f for f in self.findings if f.reported_by(check_id)]

    def about(self, name: str) -> list[Finding]:
        """The findings that concern *name*: a parameter name or cell path (a glob is allowed).

        Example:
            >>> import graphaudit
            >>> from mindspore import nn
            >>> net = nn.SequentialCell([nn.Dense(4, 4), nn.Dense(4, 2)])
            >>> [f.check_id for f in graphaudit.audit(net, nn.SGD(net[0].trainable_params())).about("1.bias")]
            ['GA201']
        """
        return [f for f in self.findings if f.concerns(name)]

    def summary(self) -> str:
        """One line: ``OK`` or ``FAILED``, the counts, and how many checks ran.

        Example:
            >>> import graphaudit
            >>> from mindspore import nn
            >>> graphaudit.audit(nn.Dense(3, 2)).summary()[:33]
            'OK (0 errors, 0 warnings, 0 info)'
        """
        counts = ", ".join(plural(n, s) for s, n in self.counts().items())
        return (
            f"{'OK' if self.ok else 'FAILED'} ({counts}); {plural(len(self.checks_run), 'check')} run, "
            f"{len(self.not_run)} not run"
        )

    def to_dict(self) -> dict[str, Any]:
        found = {
            "schema_version": JSON_SCHEMA_VERSION,
            "network": self.network,
            "unwrapped": list(self.unwrapped),
            "ok": self.ok,
            "counts": self.counts(),
            "checks_run": list(self.checks_run),
            "skipped": self.skipped,
            "not_run": [n.to_dict() for n in self.not_run],
            "findings": [f.to_dict() for f in self.findings],
        }
        if self.suppressed:  # only when the configuration hid something
            found["suppressions"] = [s.to_dict() for s in self.suppressed]
        if self.compiled:  # only when the user compiles something: other reports keep their keys
            found["compiled"] = self.compiled
        if self.datasets:  # only when pipelines were audited: a network's report keeps its keys
            from graphaudit.graph.pipeline import pipeline_dict

            found["datasets"] = {name: pipeline_dict(graph) for name, graph in self.datasets.items()}
        if self.reference is not None:  # only with reference=: other reports keep their keys
            found["reference"] = self.reference
        return found

    @property
    def compiled(self) -> list[dict[str, str]]:
        """What the user compiles (``mindspore.jit``, GRAPH_MODE), traced as Python: ``{"path", "what", "how"}``."""
        from graphaudit.graph.queries import compiled_cells

        return compiled_cells(self.graph)

    @checked_call
    def to_json(self, *, indent: int | None = 2) -> str:
        """The report as JSON (``schema_version`` 2: the keys of :meth:`to_dict`)."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @checked_call
    def text(self, *, audience: str = "python", not_run: bool = False) -> str:
        """The report as text; *audience* words the checks not run for ``"python"`` or ``"cli"``.

        The checks that did not run take one line saying how to list them, unless *not_run*
        asks for the list (what each needs and how to give it, grouped by reason). Every name
        and message is escaped (:func:`~graphaudit.findings.printable`): a newline or a
        terminal escape in a cell name shows as ``\\n`` / ``\\u001b`` and cannot forge a line.

        Example:
            >>> import graphaudit
            >>> from mindspore import nn
            >>> print(graphaudit.audit(nn.Dense(3, 2)).text().splitlines()[-1])  # doctest: +ELLIPSIS
            NOT RUN: ... checks (what each needs: report.not_run, or report.text(not_run=True))
        """
        inside = f" (inside {' > '.join(self.unwrapped)})" if self.unwrapped else ""
        lines = [printable(f"graphaudit report for {self.network}{inside}: ") + self.summary()]
        for severity in SEVERITIES:
            found = self.of_severity(severity)
            if found:
                lines.append(f"\n{severity.upper()}S")
                lines += [_format(f) for f in found]
        if self.suppressed:
            ids = ", ".join(dict.fromkeys(s.finding.check_id for s in self.suppressed))
            lines.append(
                f"\nSUPPRESSED: {plural(len(self.suppressed), 'finding')} ({ids}) hidden by the "
                "configuration (each with the reason: report.suppressed, JSON and SARIF)"
            )
        if self.compiled:
            lines.append("\nCOMPILED (traced as the Python it runs)")
            lines += [
                printable(
                    f"  {c['path'] or '(root)'} ({c['what']}, {'@jit' if c['how'] == 'jit' else 'GRAPH_MODE'})"
                )
                for c in self.compiled
            ]
        if self.reference is not None:
            from graphaudit.report.port import reference_lines

            lines += reference_lines(self.reference)
        if self.not_run and not not_run:
            how = _LIST_NOT_RUN[audience]
            lines.append(f"\nNOT RUN: {plural(len(self.not_run), 'check')} (what each needs: {how})")
        elif self.not_run:
            lines.append("\nNOT RUN")
            by_reason: dict[str, list[NotRun]] = {}
            for n in self.not_run:
                by_reason.setdefault(n.why(audience), []).append(n)
            for why, checks in by_reason.items():
                if len(checks) == 1:
                    lines.append(f"  {printable(checks[0].text(audience))}")
                else:
                    lines.append(printable(f"  {', '.join(n.check_id for n in checks)} need {why}"))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    @checked_call
    def render(self, path: str | Path, **options: Any) -> Path:
        """Draw the graph with the findings marked; see :func:`graphaudit.report.render.render_report`.

        The format follows the suffix (``.svg``, ``.png``, ``.pdf``, ``.dot``, ``.html``) or
        ``format=``; ``depth=`` collapses deeper cells. Needs Graphviz's ``dot``, except for DOT.

        Example:
            >>> import graphaudit, tempfile, pathlib
            >>> from mindspore import nn
            >>> report = graphaudit.audit(nn.Dense(2, 2))
            >>> path = report.render(pathlib.Path(tempfile.mkdtemp()) / "net.dot")
            >>> path.read_text().startswith("digraph")
            True
        """
        from graphaudit.report.render import render_report  # drawing is optional for audits

        return render_report(self, path, **options)

    def _repr_svg_(self) -> str:
        from graphaudit.report.render import report_svg

        return report_svg(self)

    def _repr_html_(self) -> str:
        from graphaudit.report.render import report_html

        return report_html(self)

    def __repr__(self) -> str:
        return f"<Report {self.network}: {len(self.findings)} findings, ok={self.ok}>"


def _format(finding: Finding) -> str:
    subjects = finding.subjects
    also = ""
    if len(subjects) > 1 and not finding.names_its_subjects():  # said once: in the message
        shown = printable(", ".join(subjects[:SUBJECTS_SHOWN]))
        more = len(subjects) - SUBJECTS_SHOWN
        also = f"\n      subjects: {shown}" + (
            f" and {more} more ({len(subjects)} in all)" if more > 0 else ""
        )
    return (
        f"  {finding.check_id} {finding.name}  {printable(finding.subject)}{also}\n"
        f"      {printable(finding.message)}\n      fix: {printable(finding.fix)}"
    )
