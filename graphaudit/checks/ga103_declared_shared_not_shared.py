"""GA103 declared-shared-not-shared."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.patterns import cell_matches, parameter_matches
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing


@dataclass(frozen=True)
class DeclaredSharedParameterNotTied(Cause):
    """A group the design declares one shared parameter that is several Parameter objects."""

    group: tuple[str, ...]  # the declared group, as written in the spec
    names: tuple[str, ...]  # the distinct Parameter objects it resolves to, by attribute path
    notes: tuple[str, ...]  # each one's Parameter.name, when it differs from its path ("" else)

    def message(self) -> str:
        described = listing((name + note for name, note in zip(self.names, self.notes)), None)
        return (
            f"the design declares {list(self.group)!r} one shared parameter, but they are {len(self.names)} "
            f"distinct Parameter objects ({described}): the weights are not tied."
        )

    def fix(self) -> str:
        return (
            f"Tie them by assignment, e.g. make the owner of {self.names[1]} hold the Parameter "
            f"{self.names[0]} (cell.weight = other.weight), not a copy of its values; or correct the spec."
        )


@dataclass(frozen=True)
class DeclaredSharedCellNotShared(Cause):
    """A group the design declares one shared cell that is several Cell objects."""

    group: tuple[str, ...]  # the declared group, as written in the spec
    paths: tuple[str, ...]  # the distinct Cell objects it resolves to, by path

    def message(self) -> str:
        return (
            f"the design declares {list(self.group)!r} one shared cell, but they are {len(self.paths)} distinct "
            f"Cell objects ({listing(self.paths, None)}): they do not share weights."
        )

    def fix(self) -> str:
        return (
            f"Put the same cell object in every place (e.g. build it once and assign it to {self.paths[1]} "
            "too), or correct the spec."
        )


@register(
    "GA103",
    "declared-shared-not-shared",
    severity="error",
    needs=(DeclaredDesign,),
    causes=(DeclaredSharedParameterNotTied, DeclaredSharedCellNotShared),
    once="one finding per declared group of the design: each group is one statement, its members all listed",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A group the design declares shared that is not one object in the network.

    What it does:
        For each ``Spec.shared_parameters`` group, resolves every member (a ``Parameter.name``
        or an attribute path, globs allowed) and reports the group when the members are more
        than one Parameter object, naming each by its attribute path (and its ``Parameter.name``
        when that differs). Likewise for each ``Spec.shared_cells`` group and Cell
        objects. (A declared name that matches nothing is GA300's.)

    Why is this bad:
        Tying is easy to break without noticing: ``decoder.weight.set_data(embed.embedding_table)``
        copies the values once instead of tying, a refactor re-creates a layer, a checkpoint load
        replaces a Parameter. The network still trains, but as a larger, different model than
        the one designed, and the tie the author relies on is not there.

    Example:
        ```python
        self.decoder = nn.Dense(dim, vocab, has_bias=False)
        self.decoder.weight.set_data(self.embed.embedding_table)  # a copy, not a tie
        spec = Spec(shared_parameters=[["embed.embedding_table", "decoder.weight"]])
        ```

    Use instead:
        ```python
        self.decoder.weight = self.embed.embedding_table  # the same Parameter object
        ```
    """
    for group in ctx.spec.shared_parameters:
        resolved: list[str] = []
        for pattern in group:
            nodes = parameter_matches(ctx, pattern)
            resolved.extend(n for n in nodes if n not in resolved)
        if len(resolved) > 1:
            names = tuple(ctx.subject_of(n) for n in resolved)  # attribute paths, what a user greps for
            notes = tuple(ctx.named_as(n) for n in resolved)
            yield ctx.finding(
                "error", names[1], DeclaredSharedParameterNotTied(tuple(group), names, notes), resolved
            )
    for group in ctx.spec.shared_cells:
        resolved_cells: dict[str, str] = {}
        for pattern in group:
            matches = cell_matches(ctx, pattern)
            for path, node in matches:
                resolved_cells.setdefault(node, path)
        if len(resolved_cells) > 1:
            paths = tuple(resolved_cells.values())
            cause = DeclaredSharedCellNotShared(tuple(group), paths)
            yield ctx.finding("error", paths[1], cause, list(resolved_cells))
