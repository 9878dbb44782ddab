"""GA103 declared-shared-not-shared."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.patterns import cell_matches, parameter_matches
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.findings import Finding


@register(
    "GA103",
    "declared-shared-not-shared",
    severity="error",
    needs=(DeclaredDesign,),
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
            names = [ctx.subject_of(n) for n in resolved]  # attribute paths, what a user greps for
            described = [ctx.subject_of(n) + ctx.named_as(n) for n in resolved]
            yield ctx.finding(
                "error",
                names[1],
                f"the design declares {group!r} one shared parameter, but they are {len(resolved)} "
                f"distinct Parameter objects ({', '.join(described)}): the weights are not tied.",
                f"Tie them by assignment, e.g. make the owner of {names[1]} hold the Parameter "
                f"{names[0]} (cell.weight = other.weight), not a copy of its values; or correct the spec.",
                resolved,
            )
    for group in ctx.spec.shared_cells:
        resolved_cells: dict[str, str] = {}
        for pattern in group:
            matches = cell_matches(ctx, pattern)
            for path, node in matches:
                resolved_cells.setdefault(node, path)
        if len(resolved_cells) > 1:
            paths = list(resolved_cells.values())
            yield ctx.finding(
                "error",
                paths[1],
                f"the design declares {group!r} one shared cell, but they are {len(paths)} distinct "
                f"Cell objects ({', '.join(paths)}): they do not share weights.",
                f"Put the same cell object in every place (e.g. build it once and assign it to {paths[1]} "
                "too), or correct the spec.",
                list(resolved_cells),
            )
