"""GA631 port-parameter-not-in-reference."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import group_parameters, listing
from graphaudit.checks._shared.reference import shape_text
from graphaudit.checks.context import AuditContext
from graphaudit.checks.ga630_reference_weight_missing_in_port import ANOTHER_MODEL
from graphaudit.evidence.reference import ReferenceWeights
from graphaudit.findings import Finding


@register("GA631", "port-parameter-not-in-reference", severity="warning", needs=(ReferenceWeights,))
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A trainable parameter of the port that the original does not have: a layer or a bias added.

    What it does:
        Pairs the port's parameters with the original's weights as GA630 does and reports the
        port's trainable parameters left without a partner, gathered by cell. A parameter
        that does not train (a buffer the original computes and does not save, such as
        rotary frequencies) is not reported. When the original's file leaves out a copy it
        ties (``save_pretrained`` drops ``lm_head.weight`` tied to the embeddings), the message
        names the original weight of the same shape the port may have to tie it to.

    Why is this bad:
        An added layer or bias changes what the network computes: the original's weights no
        longer give the original's outputs, and the added parameters start from random
        values. A warning, not an error: a port may add on purpose (a new head).

    Example:
        ```python
        self.fc2 = nn.Dense(8, 2)
        self.extra = nn.Dense(2, 2)        # not in the original
        ```

    Use instead:
        ```python
        self.fc2 = nn.Dense(8, 2)          # as the original; a new head: select GA631 out for it
        ```
    """
    weights = ctx.need(ReferenceWeights)
    if weights.matched_fraction() < ANOTHER_MODEL:
        return  # GA634
    added = [weights.port_nodes[n] for n in weights.mapping.port_only if n not in weights.frozen]
    universe = list(weights.port_nodes.values())
    shapes = {pair.reference: weights.reference_shapes[pair.reference] for pair in weights.mapping.pairs}
    for group in group_parameters(ctx, added, universe):
        names = [ctx.graph.nodes[n]["path"] for n in group.nodes]
        like = sorted(
            {ref for name in names for ref, shape in shapes.items() if shape == weights.port_shapes[name]}
        )
        tie = (
            f" The original's {like[0]} has the same shape: if the original ties them ({weights.format} files "
            "leave tied copies out), tie them in the port too."
            if len(like) == 1 and len(names) == 1
            else ""
        )
        sized = listing([f"{n} ({shape_text(weights.port_shapes[n])})" for n in names])
        yield ctx.finding(
            "warning",
            group.subject,
            f"The port has {sized}, which the original ({weights.label}) does not have: "
            f"{'a layer' if group.cell is not None else 'a parameter'} added.{tie}",
            "Remove what the original does not have, or pair it with the original's weight: "
            "reference_map={'port.name': 'original.name'}.",
            group.graph_nodes,
            subjects=group.names,
        )
