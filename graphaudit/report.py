"""The result of an audit: findings, the annotated graph, text and JSON forms.

Example:
    >>> import graphaudit
    >>> from mindspore import nn
    >>> net = nn.Dense(3, 2)
    >>> report = graphaudit.audit(net, nn.SGD(net.trainable_params()))
    >>> report.ok
    True
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx

from graphaudit.findings import SEVERITIES, Finding, severity_rank

__all__ = ["JSON_SCHEMA_VERSION", "Report"]

JSON_SCHEMA_VERSION = 1


@dataclass
class Report:
    """What :func:`graphaudit.audit` found.

    ``findings`` are in a deterministic order (severity, check ID, subject); ``graph`` is the
    captured graph with each finding attached to its nodes (node attributes ``findings``, the
    check IDs as JSON text, and ``severity``, the worst one); ``skipped`` maps the ID of each
    check that could not run to the reason (e.g. it needs ``inputs``).
    """

    findings: list[Finding]
    graph: nx.MultiDiGraph
    checks_run: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    network: str = ""

    def __post_init__(self) -> None:
        self.findings = sorted(self.findings, key=Finding.sort_key)
        self._annotate()

    def _annotate(self) -> None:
        on_node: dict[str, list[Finding]] = {}
        for finding in self.findings:
            for node in finding.nodes:
                if node in self.graph:
                    on_node.setdefault(node, []).append(finding)
        for node, found in on_node.items():
            attrs = self.graph.nodes[node]
            attrs["findings"] = json.dumps(sorted({f.check_id for f in found}))
            attrs["severity"] = min((f.severity for f in found), key=severity_rank)

    @property
    def ok(self) -> bool:
        """True when no finding has severity ``error``."""
        return not any(f.severity == "error" for f in self.findings)

    def of_severity(self, *severities: str) -> list[Finding]:
        """The findings of the given severities."""
        return [f for f in self.findings if f.severity in severities]

    def by_check(self, check_id: str) -> list[Finding]:
        """The findings of one check.

        Example:
            >>> import graphaudit
            >>> from mindspore import nn
            >>> graphaudit.audit(nn.Dense(3, 2)).by_check("GA201")
            []
        """
        return [f for f in self.findings if f.check_id == check_id]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": JSON_SCHEMA_VERSION,
            "network": self.network,
            "ok": self.ok,
            "counts": {s: len(self.of_severity(s)) for s in SEVERITIES},
            "checks_run": list(self.checks_run),
            "skipped": dict(self.skipped),
            "findings": [f.to_dict() for f in self.findings],
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        """The report as JSON (``schema_version`` 1: the keys of :meth:`to_dict`)."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def __str__(self) -> str:
        counts = ", ".join(
            f"{len(self.of_severity(s))} {s}{'s' if len(self.of_severity(s)) != 1 else ''}"
            for s in SEVERITIES
        )
        lines = [f"graphaudit report for {self.network}: {'OK' if self.ok else 'FAILED'} ({counts})"]
        for severity in SEVERITIES:
            found = self.of_severity(severity)
            if found:
                lines.append(f"\n{severity.upper()}S")
                lines += [_format(f) for f in found]
        if self.skipped:
            lines.append("\nNOT RUN")
            lines += [f"  {check_id}: {reason}" for check_id, reason in sorted(self.skipped.items())]
        return "\n".join(lines)

    def render(self, path: str | Path, **options: Any) -> Path:
        """Draw the graph with the findings marked; see :func:`graphaudit.draw.render_report`.

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
        from graphaudit.draw import render_report  # drawing is optional for audits

        return render_report(self, path, **options)

    def _repr_svg_(self) -> str:
        from graphaudit.draw import report_svg

        return report_svg(self)

    def _repr_html_(self) -> str:
        from graphaudit.draw import report_html

        return report_html(self)

    def __repr__(self) -> str:
        return f"<Report {self.network}: {len(self.findings)} findings, ok={self.ok}>"


def _format(finding: Finding) -> str:
    return (
        f"  {finding.check_id} {finding.name}  {finding.subject}\n"
        f"      {finding.message}\n      fix: {finding.fix}"
    )
