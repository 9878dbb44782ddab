"""GA300 spec-names-nothing."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.patterns import Declared, declared_patterns, known_parameter_names, names
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.findings import Cause, Finding
from graphaudit.graph.connectivity import close_paths
from graphaudit.suggest import close_matches
from graphaudit.text import listing


@dataclass(frozen=True)
class SpecPatternMatchesNothing(Cause):
    """A name or glob of the declared design that matches no cell path (or no parameter) of the network."""

    names_subjects = True
    pattern: str
    places: tuple[str, ...]  # where the design uses it, as written: "Spec.expected_connections ('a', 'b')"
    source: str  # where the design was read from (a file), or ""
    names: str  # what it must name: "cell" (a cell path) or "parameter"
    close: tuple[str, ...]  # the names of the network that look like it

    def message(self) -> str:
        source = f" ({self.source})" if self.source else ""
        what = "no cell path of the network" if self.names == "cell" else "no parameter of the network"
        hint = f" Close matches: {listing(self.close, None)}." if self.close else ""
        return (
            f"{listing(self.places, None)}{source} names {self.pattern!r}, which matches {what}, so the rule "
            f"checks nothing.{hint}"
        )

    def fix(self) -> str:
        if self.names == "cell":
            return (
                "Fix the path in the design (cell paths are attribute paths such as 'layer1.0.conv1'; "
                "globs use fnmatch: 'layer1.*')."
            )
        return (
            "Fix the pattern: parameter names are Parameter.name values such as "
            "'backbone.conv1.weight' (attribute paths too in shared_parameters); globs use fnmatch "
            "('backbone.*')."
        )


@register(
    "GA300",
    "spec-names-nothing",
    severity="error",
    needs=(DeclaredDesign,),
    causes=(SpecPatternMatchesNothing,),
    once="one finding per pattern of the design: each is written once in the design, wherever it is used",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A name or glob of the declared design that matches nothing in the network.

    What it does:
        Resolves every name and glob of the ``Spec`` the way the check that enforces it does —
        ``frozen`` and ``trainable`` against ``Parameter.name`` (GA205, GA206),
        ``shared_parameters`` against parameter names and attribute paths and ``shared_cells``
        against cell paths (GA103), the connections (GA304, GA305, GA306, GA308) and ``calls``
        (GA307) against cell paths — and reports each pattern that matches nothing, once,
        naming every place the design uses it and the names that look like it. It reads only
        the network's structure, so a misspelt path is reported even when no forward pass was
        traced.

    Why is this bad:
        A rule that names nothing checks nothing: ``Spec(frozen=["backbon.*"])`` passes on a
        network whose backbone trains, and ``expected_connections=[("encodr", "head")]``
        passes whatever the wiring. The design looks enforced, in CI too, and is not.

    Example:
        ```python
        Spec(frozen=["backbon.*"], expected_connections=[("encodr", "head")])
        ```

    Use instead:
        ```python
        Spec(frozen=["backbone.*"], expected_connections=[("encoder", "head")])
        ```
    """
    unmatched: dict[str, list[Declared]] = {}
    for declared in declared_patterns(ctx.spec):
        if not names(ctx, declared):
            unmatched.setdefault(declared.pattern, []).append(declared)
    if not unmatched:
        return
    parameter_names: list[str] | None = None
    for pattern, uses in unmatched.items():
        places = tuple(dict.fromkeys(d.where for d in uses))
        if uses[0].kind == "cell":
            cause = SpecPatternMatchesNothing(
                pattern, places, ctx.spec.source or "", "cell", tuple(close_paths(ctx.graph, pattern))
            )
        else:
            if parameter_names is None:
                parameter_names = known_parameter_names(ctx)
            close = tuple(close_matches(pattern.rstrip("*."), parameter_names))
            cause = SpecPatternMatchesNothing(pattern, places, ctx.spec.source or "", "parameter", close)
        yield ctx.finding("error", pattern, cause, [g.cell_node("")])
