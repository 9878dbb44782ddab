"""GA631 port-parameter-not-in-reference."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import Group, group_parameters, holder, pattern
from graphaudit.checks._shared.reference import ANOTHER, shape_text
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.reference import ReferenceWeights
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing


@dataclass(frozen=True)
class PortParameterNotInReference(Cause):
    """Trainable parameters of the port the original does not have: a layer or a parameter added."""

    names_subjects = True
    original: str  # the reference's label (its file's name)
    names: tuple[str, ...]  # the port's parameters, by path
    shapes: tuple[tuple[int, ...], ...]  # their shapes, in the same order
    layer: bool  # whole cells added (all their parameters), not a parameter of a cell the original has
    same_shape: str = ""  # the one weight of the original of a lone parameter's shape, when there is one
    format: str = ""  # the reference's format, which leaves tied copies out (with same_shape)

    def message(self) -> str:
        sized = listing([f"{name} ({shape_text(shape)})" for name, shape in zip(self.names, self.shapes)])
        tie = (
            f" The original's {self.same_shape} has the same shape: if the original ties them ({self.format} files "
            "leave tied copies out), tie them in the port too."
            if self.same_shape
            else ""
        )
        return (
            f"The port has {sized}, which the original ({self.original}) does not have: "
            f"{'a layer' if self.layer else 'a parameter'} added.{tie}"
        )

    def fix(self) -> str:
        return (
            "Remove what the original does not have, or pair it with the original's weight: "
            "reference_map={'port.name': 'original.name'}."
        )


@register(
    "GA631",
    "port-parameter-not-in-reference",
    severity="warning",
    needs=(ReferenceWeights,),
    causes=(PortParameterNotInReference,),
    defers_to={"GA634": ANOTHER},
)
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
    added = [weights.port_nodes[n] for n in weights.added()]
    universe = list(weights.port_nodes.values())
    shapes = {pair.reference: weights.reference_shapes[pair.reference] for pair in weights.mapping.pairs}
    # One cause, one finding: the same layer added to every block one loop built is one finding.
    alike: dict[str, list[Group]] = {}
    for group in group_parameters(ctx, added, universe):
        alike.setdefault(pattern(group.subject), []).append(group)
    for groups in alike.values():
        group = groups[0] if len(groups) == 1 else _merged(groups)
        layers = group.cell is not None or any(g.cell is not None for g in groups)
        names = [ctx.graph.nodes[n]["path"] for n in group.nodes]
        like = sorted(
            {ref for name in names for ref, shape in shapes.items() if shape == weights.port_shapes[name]}
        )
        lone = len(like) == 1 and len(names) == 1
        cause = PortParameterNotInReference(
            weights.label,
            tuple(names),
            tuple(tuple(int(d) for d in weights.port_shapes[n]) for n in names),
            layers,
            like[0] if lone else "",
            weights.format if lone else "",
        )
        nodes = tuple(node for each in groups for node in each.graph_nodes)
        yield ctx.finding("warning", group.subject, cause, nodes, subjects=group.names)


def _merged(groups: list[Group]) -> Group:
    """Groups of cells built alike as one, under the cell that holds them all."""
    subject = holder([group.subject for group in groups])
    return Group(
        subject,
        tuple(name for group in groups for name in group.names),
        tuple(node for group in groups for node in group.nodes),
        note="",
    )
