"""How an observed design departs from a declared one: one readable line per difference.

The declared design (:class:`~graphaudit.spec.Spec` written by hand or loaded from a file)
may use globs; the observed one (a snapshot, :meth:`Spec.from_net
<graphaudit.spec.Spec.from_net>`) holds exact names, escaped (:func:`~graphaudit.spec.escape`),
and is read literally. :meth:`Spec.diff <graphaudit.spec.Spec.diff>` is :func:`diff_designs`.

Example:
    >>> from graphaudit.spec import Spec
    >>> declared = Spec(calls={"body": 1}, frozen=["backbone.*"])
    >>> for line in diff_designs(declared, Spec(calls={"body": 2})):
    ...     print(line)
    frozen: the spec declares 'backbone.*' frozen, but no frozen parameter matches it
    calls: 'body' is called 2 times in one forward pass, but the spec says 1
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from graphaudit.spec.patterns import matches_any, unescape

if TYPE_CHECKING:
    from graphaudit.spec.model import Spec

__all__ = ["diff_designs"]


def diff_designs(declared: Spec, observed: Spec, trainable: Iterable[str] = ()) -> list[str]:
    """The differences between the *declared* design and the *observed* one, one line each.

    *trainable* names the parameters observed trainable (a snapshot lists only the frozen
    ones): each one the declared design freezes is a difference too.

    Example:
        >>> from graphaudit.spec import Spec
        >>> diff_designs(Spec(frozen=["backbone.*"]), Spec(), trainable=["backbone.0.weight"])
        ["frozen: 'backbone.0.weight' is trainable (requires_grad=True), but the spec declares it frozen"]
        >>> diff_designs(Spec(shared_cells=[["layers.*"]]), Spec(shared_cells=[["layers.0", "layers.1"]]))
        []
    """
    trainable = list(trainable)
    lines = _diff_frozen(declared, [unescape(name) for name in observed.frozen], trainable)
    lines += _diff_groups("shared parameters", declared.shared_parameters, observed.shared_parameters)
    lines += _diff_groups("shared cells", declared.shared_cells, observed.shared_cells)
    lines += _diff_connections(declared, observed)
    lines += _diff_calls(declared, observed)
    return lines


def _diff_frozen(declared: Spec, frozen: list[str], trainable: list[str]) -> list[str]:
    lines = []
    for name in frozen:
        if declared.is_frozen(name):
            continue
        if declared.is_trainable(name):
            lines.append(
                f"frozen: {name!r} is frozen (requires_grad=False), but the spec declares it trainable"
            )
        else:
            lines.append(
                f"frozen: {name!r} is frozen (requires_grad=False), but the spec does not declare it frozen"
            )
    for name in trainable:
        if declared.is_frozen(name) and not declared.is_trainable(name):
            lines.append(
                f"frozen: {name!r} is trainable (requires_grad=True), but the spec declares it frozen"
            )
    for pattern in declared.frozen:
        if not any(fnmatchcase(name, pattern) for name in frozen) and not any(
            fnmatchcase(name, pattern) for name in trainable
        ):
            lines.append(f"frozen: the spec declares {pattern!r} frozen, but no frozen parameter matches it")
    return lines


def _times(count: int) -> str:
    return f"{count} time{'s' if count != 1 else ''}"


def _group_text(group: Sequence[str]) -> str:
    return "[" + ", ".join(repr(name) for name in group) + "]"


def _diff_groups(what: str, declared: list[list[str]], observed: list[list[str]]) -> list[str]:
    lines = []
    actual = [[unescape(name) for name in group] for group in observed]
    seen: set[int] = set()
    for group in declared:
        hits = [i for i, members in enumerate(actual) if any(matches_any(group, m) for m in members)]
        seen.update(hits)
        if not hits:
            lines.append(
                f"{what}: {_group_text(group)} are declared shared, but in the network they are "
                "separate objects (the tie is broken)"
            )
            continue
        members = actual[hits[0]]
        exact = (
            len(hits) == 1
            and all(matches_any(group, m) for m in members)
            and all(any(fnmatchcase(m, p) for m in members) for p in group)
        )
        if not exact:
            found = " and ".join(_group_text(actual[i]) for i in hits)
            lines.append(
                f"{what}: {_group_text(group)} are declared shared, but in the network the shared "
                f"group{'s are' if len(hits) > 1 else ' is'} {found}"
            )
    for index, members in enumerate(actual):
        if index not in seen:
            lines.append(
                f"{what}: {_group_text(members)} are shared in the network, but the spec does not declare it"
            )
    return lines


def _diff_connections(declared: Spec, observed: Spec) -> list[str]:
    lines = []
    actual = [(unescape(a), unescape(b)) for a, b in observed.expected_connections]

    def matching(source: str, target: str) -> list[tuple[str, str]]:
        return [(a, b) for a, b in actual if fnmatchcase(a, source) and fnmatchcase(b, target)]

    for source, target in declared.expected_connections:
        if not matching(source, target):
            lines.append(
                f"connections: {source} -> {target} is expected, but the network has no such connection"
            )
    for source, target in declared.forbidden_connections:
        for a, b in matching(source, target):
            rule = "" if (a, b) == (source, target) else f" (matches {source} -> {target})"
            lines.append(f"connections: {a} -> {b} is in the network, but the spec forbids it{rule}")
    if declared.exhaustive_connections:
        named = {p for pair in declared.expected_connections for p in pair}
        rules = (*declared.expected_connections, *declared.forbidden_connections)
        for a, b in actual:
            if (
                matches_any(named, a)
                and matches_any(named, b)
                and not any(fnmatchcase(a, s) and fnmatchcase(b, t) for s, t in rules)
            ):
                lines.append(
                    f"connections: {a} -> {b} is in the network, but the spec does not declare it "
                    "(its connections are exhaustive)"
                )
    return lines


def _diff_calls(declared: Spec, observed: Spec) -> list[str]:
    lines = []
    actual = {unescape(path): count for path, count in observed.calls.items()}
    covered: set[str] = set()
    for pattern, count in declared.calls.items():
        hits = [path for path in actual if fnmatchcase(path, pattern)]
        if not hits:
            lines.append(
                f"calls: the spec says {pattern!r} is called {_times(count)}, but the network has "
                "no such cell (or the forward pass was not traced)"
            )
        for path in hits:
            if actual[path] != count:
                lines.append(
                    f"calls: {path!r} is called {_times(actual[path])} in one forward pass, "
                    f"but the spec says {count}"
                )
        covered.update(hits)
    for path, count in actual.items():
        if path not in covered and count > 1:
            lines.append(
                f"calls: {path!r} is called {_times(count)} in one forward pass, but the spec does not declare it"
            )
    return lines
