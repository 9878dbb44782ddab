"""GA102 shared-parameter-inventory."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import holder
from graphaudit.checks._shared.sharing import tie_groups, tied_parameters, ties_described
from graphaudit.checks.context import AuditContext
from graphaudit.findings import Finding


@register("GA102", "shared-parameter-inventory", severity="info")
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
        name = ctx.subject_of(node)
        if len(group) == 1:
            owner_text = ", ".join(f"{ctx.cell_path(o)} ({ctx.graph.nodes[o]['class_name']})" for o in owners)
            message = (
                f"{name}{ctx.named_as(node)} is one Parameter object held under {len(paths)} paths "
                f"({', '.join(paths)}) by {owner_text}: these weights are tied and always equal."
            )
            declare, separate = f"declare it with Spec(shared_parameters=[{paths!r}])", "a separate Parameter"
        else:
            names = [ctx.subject_of(n) for n, _, _ in group]
            message = f"{ties_described(ctx, group, names)}: these weights are tied and always equal."
            declare = f"declare each tie with Spec(shared_parameters=[{paths!r}, ...])"
            separate = "separate Parameters"
        yield ctx.finding(
            "info",
            name if len(group) == 1 else holder([ctx.subject_of(n) for n, _, _ in group]),
            message,
            f"Nothing to do if the tie{'s are' if len(group) > 1 else ' is'} meant; {declare} so that "
            f"{'they are' if len(group) > 1 else 'it is'} checked. If {'they are' if len(group) > 1 else 'it is'} "
            f"not meant, create {separate} for each owner.",
            list(dict.fromkeys(n for tie in group for n in (tie[0], *tie[1]))),
            subjects=[ctx.subject_of(n) for n, _, _ in group],
        )
