"""Assertions for test suites: a network audits clean, a network matches its design spec.

- :func:`assert_clean`: the audit finds no error or warning other than the allowed ones;
- :func:`assert_matches_spec`: the network's design matches a :class:`~graphaudit.spec.Spec`;
- :func:`assert_matches_snapshot`: the same against a snapshot file, written on the first run
  (what the ``design_snapshot`` pytest fixture of :mod:`graphaudit.pytest_plugin` calls);
- :func:`assert_matches_reference`: a port has its original's weights, shapes and ties
  (GA630-GA649, against ``.safetensors``, ``.pth``/``.bin`` or ``.onnx`` files of the original).

Importing this module does not import MindSpore: the audit and the capture are imported by
the functions that need them.

Example:
    >>> import graphaudit.testing as gt
    >>> from mindspore import nn
    >>> net = nn.Dense(3, 2)
    >>> gt.assert_clean(net, nn.SGD(net.trainable_params()))
    <Report Dense: 0 findings, ok=True>
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Union

from graphaudit.errors import ArgumentTypeError, GraphAuditError
from graphaudit.errors.arguments import check_path, checked_call
from graphaudit.findings import Finding, plural
from graphaudit.spec import Spec, glob_problem
from graphaudit.suggest import did_you_mean

if TYPE_CHECKING:
    from graphaudit.report import Report

__all__ = ["assert_clean", "assert_matches_reference", "assert_matches_snapshot", "assert_matches_spec"]

SpecLike = Union[Spec, str, "os.PathLike[str]"]
PathLike = Union[str, "os.PathLike[str]"]


def _parse_allow(allow: Iterable[str] | str) -> list[tuple[str, str | None]]:
    from graphaudit.checks import all_checks

    if isinstance(allow, str):
        allow = (allow,)
    elif not hasattr(allow, "__iter__"):
        raise ArgumentTypeError(
            f"allow= holds check IDs, check names or 'ID:subject-glob' strings, got {type(allow).__name__} "
            f"{allow!r}: write allow=['GA101'] (a list)"
        )
    checks = all_checks()
    known = set(checks) | {check.name for check in checks.values()}
    rules: list[tuple[str, str | None]] = []
    for entry in allow:
        if not isinstance(entry, str):
            raise GraphAuditError(
                f"allow= holds check IDs, check names or 'ID:subject-glob' strings, got {type(entry).__name__} {entry!r}"
            )
        check, colon, glob = entry.partition(":")
        if check not in known:
            hint = did_you_mean(check, sorted(known), cutoff=0.5)
            raise GraphAuditError(f"allow={entry!r}: there is no check {check!r}{hint}")
        if colon:
            problem = glob_problem(glob)
            if problem is not None:
                raise GraphAuditError(f"allow={entry!r}: the subject pattern {glob!r} {problem}")
        rules.append((check, glob if colon else None))
    return rules


def _not_allowed(finding: Finding, rules: list[tuple[str, str | None]]) -> list[str]:
    """The subjects of *finding* that no rule excuses (none: the finding is allowed).

    A rule without a glob excuses the whole finding; one with a glob excuses a subject it
    matches, and the whole finding when it matches the finding's subject (the cell a grouped
    finding is about).
    """
    globs = [glob for check, glob in rules if check in (finding.check_id, finding.name)]
    if any(glob is None or fnmatchcase(finding.subject, glob) for glob in globs):
        return []
    return [s for s in finding.subjects if not any(fnmatchcase(s, glob) for glob in globs if glob)]


def _describe(finding: Finding, remaining: list[str]) -> str:
    subjects = ""
    if len(remaining) < len(finding.subjects):
        subjects = f"\n      not allowed: {', '.join(remaining)}"
    elif len(finding.subjects) > 1 and not finding.names_its_subjects():
        subjects = f"\n      subjects: {', '.join(finding.subjects)}"
    return (
        f"  {finding.check_id} {finding.name} [{finding.severity}] {finding.subject}{subjects}\n"
        f"      {finding.message}\n"
        f"      fix: {finding.fix}"
    )


@checked_call
def assert_clean(
    net_or_report: Any, optimizer: Any = None, *, allow: Iterable[str] | str = (), **audit_kwargs: Any
) -> Report:
    """Fail unless the audit finds no error or warning other than the allowed ones.

    *net_or_report* is a :class:`~graphaudit.report.Report`, or a network that is audited with
    ``graphaudit.audit(net, optimizer, **audit_kwargs)`` (``inputs=``, ``loss_fn=``,
    ``spec=``...). *allow* holds check IDs (``"GA101"``), check names
    (``"repeated-cell-in-container"``) or ``"ID:subject-glob"`` strings (``"GA201:head.*"``)
    that excuse the matching findings (a finding about several subjects is excused when the
    glob matches its subject, or when globs match every one of its subjects). ``info`` findings never fail. Returns the report.

    Raises:
        AssertionError: listing each finding not allowed, with its message and fix.
        GraphAuditError: an *allow* entry names no check, or has a malformed glob.

    Example:
        >>> import graphaudit.testing as gt
        >>> from mindspore import nn
        >>> net = nn.SequentialCell([nn.Dense(4, 4)] * 2)  # one Dense in two slots
        >>> gt.assert_clean(net)
        Traceback (most recent call last):
        ...
        AssertionError: graphaudit found 1 problem in SequentialCell:
          GA101 repeated-cell-in-container [error] 0
        ...
        >>> gt.assert_clean(net, allow=["GA101:0"])  # intended: one layer applied twice
        <Report SequentialCell: 1 findings, ok=False>
    """
    from graphaudit.report import Report

    if isinstance(net_or_report, Report):
        if optimizer is not None or audit_kwargs:
            raise GraphAuditError(
                "assert_clean() got a Report together with audit arguments; pass either a Report, "
                "or the network with its optimizer and audit keyword arguments"
            )
        report = net_or_report
    else:
        from graphaudit.runner import audit

        report = audit(net_or_report, optimizer, **audit_kwargs)
    rules = _parse_allow(allow)
    failing = [(f, left) for f in report.of_severity("error", "warning") if (left := _not_allowed(f, rules))]
    if failing:
        first, _ = failing[0]
        raise AssertionError(
            f"graphaudit found {plural(len(failing), 'problem')} in {report.network or 'the network'}:\n"
            + "\n".join(_describe(f, left) for f, left in failing)
            + f"\nIf one is intended, allow it, e.g. allow=[{first.check_id + ':' + first.subject!r}]."
        )
    return report


@checked_call
def assert_matches_reference(
    net: Any,
    reference: Any,
    *,
    inputs: Any = None,
    allow: Iterable[str] | str = (),
    reference_map: Any = None,
) -> Report:
    """Fail unless the port *net* matches its original *reference* (the port checks, GA630-GA649).

    *reference* is what ``audit(reference=...)`` takes: the original's ``.safetensors``,
    ``.pth``/``.bin`` (read without torch) or ``.onnx`` file, a dict name -> array, or the
    folder ``python -m graphaudit.reference`` dumped, or an msprobe dump (its folder or
    ``dump.json``); *reference_map* pairs names the mapping cannot find. *allow* as in
    :func:`assert_clean`. Every port check that the reference can feed must have run: the weight
    checks always, the attribute checks (GA635-GA639) for graphaudit's dump folder or an ONNX
    file, the output comparison (GA640) for a dump (not one made ``--weights-only``), and for an
    ONNX file given *inputs*. One that could not is a failure too, with its reason (a dump
    written before dumps recorded attributes: dump the original again).

    Raises:
        AssertionError: listing each difference with its message and fix, or the checks not run.

    Example:
        >>> import numpy as np, graphaudit.testing as gt
        >>> from mindspore import nn
        >>> original = {"weight": np.zeros((2, 3), np.float32), "bias": np.zeros(2, np.float32)}
        >>> gt.assert_matches_reference(nn.Dense(3, 2), original)
        <Report Dense: 0 findings, ok=True>
        >>> gt.assert_matches_reference(nn.Dense(3, 2, has_bias=False), original)
        Traceback (most recent call last):
        ...
        AssertionError: graphaudit found 1 problem in Dense:
          GA630 reference-weight-missing-in-port [error] (root)
        ...
    """
    from graphaudit.checks import all_checks
    from graphaudit.runner import audit

    checks = all_checks()
    port_checks = sorted(c for c, check in checks.items() if check.family_key == "630-649")
    # GA635 and GA637 confirm GA709 and GA701 (which guess from the number alone): their findings fold
    # into those, so those run too, or the fold would hide them; alone, they say nothing of the original
    confirmed = sorted({target for c in port_checks for target in checks[c].confirms})
    options = {"reference_map": reference_map} if reference_map is not None else {}
    report = audit(net, inputs=inputs, reference=reference, select=port_checks + confirmed, **options)
    unconfirmed = [
        f"{f.check_id}:{f.subject}"
        for f in report.findings
        if f.check_id in confirmed and not set(f.confirmed_by) & set(port_checks)
    ]
    given = isinstance(reference, (str, os.PathLike))
    ours = given and os.path.isfile(os.path.join(reference, "manifest.json"))  # graphaudit's dump folder
    outputs = given and (
        os.path.isfile(os.path.join(reference, "activations.npz"))  # a dump, not one made --weights-only
        or (os.path.isdir(reference) and not ours)  # msprobe's dump folder
        or os.path.basename(os.fspath(reference)) == "dump.json"  # msprobe's dump, given as its file
        or (os.fspath(reference).lower().endswith(".onnx") and inputs is not None)
    )
    # a weights file records no layer attributes: the attribute checks cannot run on it
    attributes = ours or (given and os.fspath(reference).lower().endswith(".onnx"))
    attribute_checks = {
        c
        for c in port_checks
        if checks[c].needs and "ReferenceAttributes" in {n.__name__ for n in checks[c].needs}
    }
    needed = [
        c for c in port_checks if (outputs or c != "GA640") and (attributes or c not in attribute_checks)
    ]
    not_run = {c: report.skipped[c] for c in needed if c in report.skipped}
    if not_run:
        raise AssertionError(
            "graphaudit could not compare the port with its original: "
            + "; ".join(f"{c} not run ({why})" for c, why in not_run.items())
        )
    allowed = [allow] if isinstance(allow, str) else list(allow)
    return assert_clean(report, allow=allowed + unconfirmed)


def _resolved(graph: Any, patterns: Iterable[str], what: str, missing: list[str]) -> list[str]:
    from graphaudit.graph.connectivity import resolve

    paths: list[str] = []
    for pattern in dict.fromkeys(patterns):
        found = resolve(graph, pattern)
        if not found:
            missing.append(f"{what}: no cell of the network matches {pattern!r}")
        paths += found
    return list(dict.fromkeys(paths))


@checked_call
def assert_matches_spec(net: Any, spec: SpecLike, *, inputs: Any = None) -> None:
    """Fail unless *net*'s design (as :meth:`Spec.from_net` sees it) matches *spec*.

    *spec* is a :class:`~graphaudit.spec.Spec` or the path of a TOML spec file. Its
    connections and call counts need a traced forward pass: pass *inputs* (one batch) when
    the spec declares any. Connections are looked for among the cells the spec names (globs
    resolved on the network), so a hand-written spec works as well as a snapshot.

    Raises:
        AssertionError: listing every difference, one per line.
        SpecError: the spec file is malformed.
        GraphAuditError: the spec declares connections or calls and *inputs* is missing.

    Example:
        >>> import numpy as np, graphaudit.testing as gt
        >>> from mindspore import nn, Tensor
        >>> from graphaudit import Spec
        >>> x = Tensor(np.ones((1, 4), np.float32))
        >>> good = nn.SequentialCell([nn.Dense(4, 4), nn.ReLU(), nn.Dense(4, 2)])
        >>> spec = Spec.from_net(good, x)
        >>> gt.assert_matches_spec(good, spec, inputs=x)
        >>> block = nn.Dense(4, 4)
        >>> gt.assert_matches_spec(nn.SequentialCell([block, nn.ReLU(), block]), spec, inputs=x)
        Traceback (most recent call last):
        ...
        AssertionError: SequentialCell does not match its design spec: 5 differences
          - shared cells: ['0', '2'] are shared in the network, but the spec does not declare it
          - connections: 1 -> 2 is expected, but the network has no such connection
          - connections: 1 -> 0 is in the network, but the spec does not declare it (its connections are exhaustive)
          - calls: '0' is called 2 times in one forward pass, but the spec says 1
          - calls: '2' is called 2 times in one forward pass, but the spec says 1
        If the new design is intended, update the spec (with the design_snapshot fixture: pytest --graphaudit-update-snapshots).
    """
    from graphaudit.capture import capture, check_cell
    from graphaudit.graph import PARAMETER, nodes_of_kind

    net = check_cell(net, function="assert_matches_spec")
    if not isinstance(spec, Spec):
        spec = Spec.load(spec)
    else:
        spec.validate()
    traced_parts = [
        part
        for part, present in (
            ("connections", spec.expected_connections or spec.forbidden_connections),
            ("call counts", spec.calls),
        )
        if present
    ]
    if traced_parts and inputs is None:
        raise GraphAuditError(
            f"the spec{f' {spec.source}' if spec.source else ''} declares {' and '.join(traced_parts)}, "
            "which need a traced forward pass: pass inputs=... (one batch, as construct() takes it)"
        )
    graph = capture(net, inputs)[0]
    missing: list[str] = []
    endpoints = [p for pair in (*spec.expected_connections, *spec.forbidden_connections) for p in pair]
    actual = Spec.from_graph(
        graph,
        depth=None,
        connection_paths=_resolved(graph, endpoints, "connections", missing) if inputs is not None else (),
        call_paths=_resolved(graph, spec.calls, "calls", missing) if inputs is not None else (),
    )
    trainable = [d["name"] for _, d in nodes_of_kind(graph, PARAMETER) if d["requires_grad"]]
    differences = missing + spec.diff(actual, trainable=trainable)
    if differences:
        where = f" ({spec.source})" if spec.source else ""
        count = f"{len(differences)} difference{'s' if len(differences) != 1 else ''}"
        raise AssertionError(
            f"{type(net).__name__} does not match its design spec{where}: {count}\n"
            + "\n".join(f"  - {line}" for line in differences)
            + "\nIf the new design is intended, update the spec "
            "(with the design_snapshot fixture: pytest --graphaudit-update-snapshots)."
        )


@checked_call
def assert_matches_snapshot(
    net: Any, path: PathLike, *, inputs: Any = None, depth: int = 1, update: bool = False
) -> Spec:
    """Compare *net* with the design snapshot at *path*, writing it when it is not there yet.

    When the TOML file at *path* does not exist, or *update* is true,
    ``Spec.from_net(net, inputs, depth=depth)`` is written there (parent folders created) and
    the check passes; otherwise *net* must match the file (:func:`assert_matches_spec`).
    Returns the spec, with ``source`` set to *path*. Commit the file: it is the reviewed design.

    Raises:
        AssertionError: the network no longer matches the file, listing every difference.
        SpecError: the file is malformed.

    Example:
        >>> import os, tempfile
        >>> import numpy as np, graphaudit.testing as gt
        >>> from mindspore import nn, Tensor
        >>> x = Tensor(np.ones((1, 4), np.float32))
        >>> path = os.path.join(tempfile.mkdtemp(), "designs", "net.toml")
        >>> gt.assert_matches_snapshot(nn.SequentialCell([nn.Dense(4, 4), nn.Dense(4, 2)]), path, inputs=x).calls
        {'0': 1, '1': 1}
        >>> block = nn.Dense(4, 4)
        >>> gt.assert_matches_snapshot(nn.SequentialCell([block, block]), path, inputs=x)
        Traceback (most recent call last):
        ...
        AssertionError: SequentialCell does not match its design spec (...net.toml): 4 differences
        ...
        >>> gt.assert_matches_snapshot(nn.SequentialCell([block, block]), path, inputs=x, update=True).calls
        {'0': 2}
    """
    __tracebackhide__ = True
    target = os.fspath(check_path(path, "path", "assert_matches_snapshot()"))
    if not isinstance(update, bool):
        raise ArgumentTypeError(
            f"assert_matches_snapshot() expects update= to be True or False, got {update!r}"
        )
    if update or not os.path.exists(target):
        spec = Spec.from_net(net, inputs, depth=depth)
        spec.save(target)
        spec.source = target
        return spec
    assert_matches_spec(net, target, inputs=inputs)
    return Spec.load(target)
