"""SARIF 2.1.0 output: a :class:`~graphaudit.report.Report` as a Static Analysis Results log.

SARIF is the format code-scanning services (GitHub code scanning, Azure DevOps, IDE
viewers) read. :func:`to_sarif` gives one ``run`` whose ``tool.driver`` lists every check
as a ``rule`` (its documentation as the help text, its declared severity as the default
level) and whose ``results`` are the report's findings: ``error`` → ``error``, ``warning``
→ ``warning``, ``info`` → ``note``.

A finding is about a parameter or a cell of the network, so each result has a *logical*
location: the subject, with ``kind`` ``"member"`` for a parameter and ``"module"`` for a
cell. With ``locate=True`` each result also gets a *physical* location, the source line that
creates what it is about, read with :mod:`inspect` and :mod:`ast` from the network's own
classes (:mod:`graphaudit.report.sarif.locations`):

- a cell: the line of its parent cell's class that assigns it (``self.head = nn.Dense(...)``;
  for an item of a ``SequentialCell`` or ``CellList``, the line that builds the container);
- a parameter: the line that assigns its owner cell, or ``self.w = Parameter(...)`` when the
  owner's class defines it;
- a finding about the optimizer (GA201-GA203): the line of the factory that builds the
  optimizer (the call of its class name), when found;
- otherwise the fallback *artifact_uri* and *start_line*: the factory (the command line
  passes the file and line where the factory is defined).

Example:
    >>> import graphaudit
    >>> from mindspore import nn
    >>> net = nn.SequentialCell([nn.Dense(4, 4), nn.Dense(4, 2)])
    >>> report = graphaudit.audit(net, nn.SGD(net[0].trainable_params()))
    >>> log = to_sarif(report, artifact_uri="model.py", start_line=3)
    >>> log["version"], log["runs"][0]["tool"]["driver"]["name"]
    ('2.1.0', 'graphaudit')
    >>> result = log["runs"][0]["results"][0]
    >>> result["ruleId"], result["level"], result["locations"][0]["logicalLocations"][0]
    ('GA201', 'error', {'fullyQualifiedName': '1', 'kind': 'module'})
    >>> result["locations"][0]["physicalLocation"]
    {'artifactLocation': {'uri': 'model.py'}, 'region': {'startLine': 3}}
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from graphaudit.checks import Check, all_checks
from graphaudit.findings import Finding
from graphaudit.graph import CELL, PARAMETER, node_paths
from graphaudit.report import Report
from graphaudit.report.sarif.locations import Locator, Site, Sources, about_optimizer
from graphaudit.version import __version__

__all__ = [
    "LEVELS",
    "SARIF_SCHEMA_URI",
    "SARIF_VERSION",
    "Site",
    "Sources",
    "about_optimizer",
    "default_severity",
    "to_sarif",
    "uri_of",
]

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
        >>> default_severity(all_checks()["GA801"]), default_severity(all_checks()["GA102"])
        ('error', 'info')
    """
    return check.severity


def uri_of(path: str | os.PathLike[str] | None) -> str | None:
    """The SARIF URI of a file: relative to the current folder (with ``/``) when inside it, else ``file:``.

    Example:
        >>> uri_of(Path.cwd() / "models" / "net.py")
        'models/net.py'
        >>> uri_of(Path.cwd().parent / "elsewhere.py").startswith("file:///")
        True
    """
    if path is None:
        return None
    resolved = Path(path).resolve()
    try:
        return resolved.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return resolved.as_uri()


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


def _class_name(optimizer: Any) -> str | None:
    if optimizer is None or isinstance(optimizer, str):
        return optimizer
    return optimizer.__name__ if isinstance(optimizer, type) else type(optimizer).__name__


def _fingerprint(finding: Finding) -> str:
    text = f"{finding.check_id}\0{finding.subject}\0{finding.message}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def _physical(uri: str, line: int | None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": uri}}
    if line is not None and line >= 1:
        physical["region"] = {"startLine": int(line)}
    return physical


def _result(
    report: Report, finding: Finding, rule_index: dict[str, int], physical: dict[str, Any] | None
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
            "subjects": list(finding.subjects),
            "confirmedBy": list(finding.confirmed_by),
            "fix": finding.fix,
            "nodes": list(finding.nodes),
            **({"cause": finding.cause.fields()} if finding.cause is not None else {}),
        },
    }
    if finding.check_id in rule_index:
        result["ruleIndex"] = rule_index[finding.check_id]
    figures = _first_divergence(report) if finding.check_id == REFERENCE_OUTPUTS_CHECK else None
    if figures is not None:  # msprobe's figures of the call GA640 found first, as data
        result["properties"]["figures"] = figures
    return result


#: The check whose result carries the figures of the first diverging cell call.
REFERENCE_OUTPUTS_CHECK = "GA640"


def _first_divergence(report: Report) -> dict[str, Any] | None:
    """The row of ``report.reference`` of the call where the port first parts from its original."""
    section = getattr(report, "reference", None) or {}
    first = section.get("first_divergence")
    if not first:
        return None
    row = next((r for r in section.get("cells", ()) if r.get("first")), None)
    return {**first, **({"row": row} if row is not None else {})}


def to_sarif(
    report: Report,
    *,
    artifact_uri: str | None = None,
    start_line: int | None = None,
    locate: bool = False,
    optimizer: Any = None,
    factories: Sequence[Any] = (),
) -> dict[str, Any]:
    """The SARIF 2.1.0 log (a JSON-ready ``dict``) of *report*.

    *artifact_uri* (a relative path with ``/`` or a ``file:`` URI, see :func:`uri_of`)
    and *start_line* are where every result points when nothing better is known: the file
    and line that build the network. With *locate*, results point at the source line that
    creates their subject (the module docstring says which); *optimizer* (the optimizer, its
    class or its class name) and *factories* (the functions or classes that build the network
    and its optimizer, searched in order for the call of the optimizer's class) place the
    findings about the optimizer. ``artifacts`` lists every file the results point at, once.
    """
    checks = all_checks()
    rules = [_rule(check) for check in checks.values()]
    rule_index = {check_id: i for i, check_id in enumerate(checks)}
    fallback = _physical(artifact_uri, start_line) if artifact_uri is not None else None
    locator = None
    if locate:
        sources = Sources()
        name = _class_name(optimizer)
        optimizer_site = None
        if name is not None:
            optimizer_site = next(
                (s for f in factories if (s := sources.call_site(f, name)) is not None), None
            )
        locator = Locator(report, sources, optimizer_site, tuple(factories), name)
    results = []
    uris = [artifact_uri] if artifact_uri is not None else []
    hidden = {id(s.finding): s.reason for s in report.suppressed}
    for finding in [*report.findings, *(s.finding for s in report.suppressed)]:
        site = locator.site(finding, checks.get(finding.check_id)) if locator is not None else None
        physical = fallback
        if site is not None:
            physical = _physical(uri_of(site.file) or site.file, site.line)
        if physical is not None:
            uris.append(physical["artifactLocation"]["uri"])
        result = _result(report, finding, rule_index, physical)
        if id(finding) in hidden:  # SARIF viewers show it as suppressed, with the justification
            result["suppressions"] = [{"kind": "external", "justification": hidden[id(finding)]}]
        results.append(result)
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
        "results": results,
        "properties": {
            "network": report.network,
            "ok": report.ok,
            "checksRun": list(report.checks_run),
            "skipped": dict(report.skipped),
            "notRun": [n.to_dict() for n in report.not_run],
        },
    }
    if getattr(report, "reference", None) is not None:  # only with reference=: other logs keep their keys
        run["properties"]["reference"] = report.reference
    if uris:
        run["artifacts"] = [
            {"location": {"uri": uri}, "roles": ["analysisTarget"]} for uri in dict.fromkeys(uris)
        ]
    return {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION, "runs": [run]}
