"""SARIF 2.1.0 output: a :class:`~graphaudit.report.Report` as a Static Analysis Results log.

SARIF is the format code-scanning services (GitHub code scanning, Azure DevOps, IDE
viewers) read. :func:`to_sarif` gives one ``run`` whose ``tool.driver`` lists every check
as a ``rule`` (its documentation as the help text) and whose ``results`` are the report's
findings: ``error`` → ``error``, ``warning`` → ``warning``, ``info`` → ``note``.

A finding is about a parameter or a cell of the network, not about a line of code, so each
result has a *logical* location: the subject, with ``kind`` ``"member"`` for a parameter and
``"module"`` for a cell. When the file that builds the network is known (the command line
passes the factory's source file), each result also has a *physical* location in that file.

Example:
    >>> import graphaudit
    >>> from mindspore import nn
    >>> net = nn.SequentialCell([nn.Dense(4, 4), nn.Dense(4, 2)])
    >>> report = graphaudit.audit(net, nn.SGD(net[0].trainable_params()))
    >>> log = to_sarif(report, artifact_uri="model.py")
    >>> log["version"], log["runs"][0]["tool"]["driver"]["name"]
    ('2.1.0', 'graphaudit')
    >>> result = log["runs"][0]["results"][0]
    >>> result["ruleId"], result["level"], result["locations"][0]["logicalLocations"][0]
    ('GA201', 'error', {'fullyQualifiedName': '1', 'kind': 'module'})
"""

from __future__ import annotations

import copy
import hashlib
import inspect
from typing import Any

from graphaudit.checks import Check, all_checks
from graphaudit.findings import Finding
from graphaudit.graph import CELL, PARAMETER, node_paths
from graphaudit.report import Report
from graphaudit.version import __version__

__all__ = ["SARIF_SCHEMA_URI", "SARIF_VERSION", "default_severity", "to_sarif"]

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)

#: graphaudit severity → SARIF ``level``.
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def default_severity(check: Check) -> str:
    """The severity *check* declares as its default (what it reports in the common case), for ``defaultConfiguration``.

    Example:
        >>> from graphaudit.checks import all_checks
        >>> default_severity(all_checks()["GA801"])
        'error'
    """
    return check.severity


def _summary(doc: str) -> str:
    return doc.strip().partition("\n")[0].strip()


def _rule(check: Check) -> dict[str, Any]:
    doc = inspect.cleandoc(check.doc)
    summary = _summary(doc) or check.name
    return {
        "id": check.check_id,
        "name": check.name,
        "shortDescription": {"text": summary},
        "fullDescription": {"text": doc.split("\n\n", 1)[0].replace("\n", " ").strip() or summary},
        "help": {"text": doc or summary, "markdown": doc or summary},
        "defaultConfiguration": {"level": LEVELS[default_severity(check)]},
        "properties": {
            "family": check.family,
            "needsInputs": check.needs_inputs,
            "severities": list(check.severities),
            "needs": [kind.title for kind in check.needs],
            "tags": ["graphaudit", check.family],
        },
    }


def _subject_kind(report: Report, finding: Finding) -> str | None:
    """``"member"`` when the subject is a parameter, ``"module"`` when it is a cell."""
    graph = report.graph
    kinds = []
    for node in finding.nodes:
        if node not in graph:
            continue
        attrs = graph.nodes[node]
        kind = attrs.get("kind")
        names = {attrs.get("name"), attrs.get("path")}
        if "paths" in attrs:
            names.update(node_paths(graph, node))
        if finding.subject in names and kind in (PARAMETER, CELL):
            return "member" if kind == PARAMETER else "module"
        kinds.append(kind)
    for kind in kinds:  # the subject is a pattern or a name not on a node: go by the first node
        if kind in (PARAMETER, CELL):
            return "member" if kind == PARAMETER else "module"
    return None


def _fingerprint(finding: Finding) -> str:
    text = f"{finding.check_id}\0{finding.subject}\0{finding.message}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def _result(
    report: Report,
    finding: Finding,
    rule_index: dict[str, int],
    physical: dict[str, Any] | None,
) -> dict[str, Any]:
    logical: dict[str, Any] = {"fullyQualifiedName": finding.subject or report.network or "<network>"}
    kind = _subject_kind(report, finding)
    if kind is not None:
        logical["kind"] = kind
    location: dict[str, Any] = {"logicalLocations": [logical]}
    if physical is not None:
        location["physicalLocation"] = copy.deepcopy(physical)  # every result owns its objects
    result: dict[str, Any] = {
        "ruleId": finding.check_id,
        "level": LEVELS[finding.severity],
        "message": {"text": f"{finding.message} Fix: {finding.fix}"},
        "locations": [location],
        "partialFingerprints": {"graphauditFinding/v1": _fingerprint(finding)},
        "properties": {
            "severity": finding.severity,
            "subject": finding.subject,
            "fix": finding.fix,
            "nodes": list(finding.nodes),
        },
    }
    if finding.check_id in rule_index:
        result["ruleIndex"] = rule_index[finding.check_id]
    return result


def to_sarif(
    report: Report, *, artifact_uri: str | None = None, start_line: int | None = None
) -> dict[str, Any]:
    """The SARIF 2.1.0 log (a JSON-ready ``dict``) of *report*.

    *artifact_uri* is the file that builds the network (a relative path with ``/`` or a
    ``file:`` URI); when given, each result also points there, at *start_line* when known.
    """
    checks = all_checks()
    rules = [_rule(check) for check in checks.values()]
    rule_index = {check_id: i for i, check_id in enumerate(checks)}
    physical: dict[str, Any] | None = None
    if artifact_uri is not None:
        physical = {"artifactLocation": {"uri": artifact_uri}}
        if start_line is not None and start_line >= 1:
            physical["region"] = {"startLine": int(start_line)}
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "graphaudit",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": rules,
            }
        },
        "automationDetails": {
            "description": {"text": f"graphaudit audit of {report.network or 'a network'}"}
        },
        "results": [_result(report, f, rule_index, physical) for f in report.findings],
        "properties": {
            "network": report.network,
            "ok": report.ok,
            "checksRun": list(report.checks_run),
            "skipped": dict(report.skipped),
        },
    }
    if artifact_uri is not None:
        run["artifacts"] = [{"location": {"uri": artifact_uri}, "roles": ["analysisTarget"]}]
    return {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION, "runs": [run]}
