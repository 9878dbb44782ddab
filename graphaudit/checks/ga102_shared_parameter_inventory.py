"""GA102 shared-parameter-inventory."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import holder
from graphaudit.checks._shared.sharing import tie_groups, tied_parameters, ties_described
from graphaudit.checks.context import AuditContext
from graphaudit.findings import Cause, Finding
from graphaudit.text import is_are, listing


@dataclass(frozen=True)
class TiedParameters(Cause):
    """Parameters that are each one Parameter object held by several cells (ties made alike: one cause)."""

    names_subjects = True
    names: tuple[str, ...]  # the tied parameters' attribute paths
    paths: tuple[str, ...]  # every attribute path of the first
    owners: tuple[str, ...]  # the cells holding the first, by path
    owner_classes: tuple[str, ...]  # their classes
    note: str = ""  # a lone parameter's Parameter.name, when it differs from its path

    def message(self) -> str:
        if len(self.names) == 1:
            owners = listing((f"{o} ({c})" for o, c in zip(self.owners, self.owner_classes)), None)
            return (
                f"{self.names[0]}{self.note} is one Parameter object held under {len(self.paths)} paths "
                f"({listing(self.paths, None)}) by {owners}: these weights are tied and always equal."
            )
        return (
            f"{ties_described(self.names, self.paths, self.owners)}: these weights are tied and always equal."
        )

    def fix(self) -> str:
        paths = list(self.paths)
        if len(self.names) == 1:
            declare, separate = f"declare it with Spec(shared_parameters=[{paths!r}])", "a separate Parameter"
        else:
            declare = f"declare each tie with Spec(shared_parameters=[{paths!r}, ...])"
            separate = "separate Parameters"
        they = "it" if len(self.names) == 1 else "they"
        return (
            f"Nothing to do if the tie{'s are' if len(self.names) > 1 else ' is'} meant; {declare} so that "
            f"{they} {is_are(len(self.names))} checked. If {they} {is_are(len(self.names))} not meant, "
            f"create {separate} for each owner."
        )


@register("GA102", "shared-parameter-inventory", severity="info", causes=(TiedParameters,))
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Every tied parameter, with every path it is reachable under.

    What it does:
        Lists (as info) each Parameter object that more than one cell holds as an attribute,
        naming every attribute path, so that every tie in the network is visible in one place.
        The ties made alike in blocks built alike (or a weight and a bias tied between the same
        two layers) are one finding.

    Why is this bad:
        Weight tying is often intended (an embedding shared with the output projection), but
        it is invisible in ``net.parameters_and_names()``, which lists a tied parameter once,
        under one name. A tie made by accident (``self.b.weight = self.a.weight`` left over
        from an experiment) silently halves a layer's capacity; a tie the author believes is
        there but is not changes the model just as silently. An inventory makes both visible.

    Example:
        ```python
        self.embed = nn.Embedding(vocab, dim)
        self.decoder = nn.Dense(dim, vocab, has_bias=False)
        self.decoder.weight = self.embed.embedding_table  # one Parameter, two owners
        ```

    Use instead:
        ```python
        # If the tie is meant, declare it so that other checks can verify it:
        spec = Spec(shared_parameters=[["embed.embedding_table", "decoder.weight"]])
        ```

        If it is not meant, give each cell its own Parameter.
    """
    # Ties made alike in every block (or a weight and a bias tied together) are one cause.
    for group in tie_groups(ctx, tied_parameters(ctx)):
        node, owners, paths = group[0]
        names = tuple(ctx.subject_of(n) for n, _, _ in group)
        cause = TiedParameters(
            names,
            tuple(paths),
            tuple(ctx.cell_path(o) for o in owners),
            tuple(ctx.graph.nodes[o]["class_name"] for o in owners),
            ctx.named_as(node) if len(group) == 1 else "",
        )
        yield ctx.finding(
            "info",
            names[0] if len(group) == 1 else holder(list(names)),
            cause,
            list(dict.fromkeys(n for tie in group for n in (tie[0], *tie[1]))),
            subjects=names,
        )
