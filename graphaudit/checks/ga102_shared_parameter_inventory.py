"""GA102 shared-parameter-inventory."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.sharing import tied_parameters
from graphaudit.checks.context import AuditContext
from graphaudit.findings import Finding


@register("GA102", "shared-parameter-inventory", severity="info")
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Every tied parameter, with every path it is reachable under.

    What it does:
        Lists (as info) each Parameter object that more than one cell holds as an attribute,
        naming every attribute path, so that every tie in the network is visible in one place.

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
    for node, owners, paths in tied_parameters(ctx):
        name = ctx.subject_of(node)
        owner_text = ", ".join(f"{ctx.cell_path(o)} ({ctx.graph.nodes[o]['class_name']})" for o in owners)
        yield ctx.finding(
            "info",
            name,
            f"{name}{ctx.named_as(node)} is one Parameter object held under {len(paths)} paths ({', '.join(paths)}) "
            f"by {owner_text}: these weights are tied and always equal.",
            "Nothing to do if the tie is meant; declare it with "
            f"Spec(shared_parameters=[{paths!r}]) so that it is checked. If it is not meant, create a "
            "separate Parameter for each owner.",
            [node, *owners],
        )
