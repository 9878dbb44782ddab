"""Which parameters are weight matrices, with their values summarised (shared by GA601-GA603).

A weight matrix is a trainable floating-point parameter with two or more dimensions,
named like a weight (``weight``, ``embedding_table``, ``kernel``...) or held by a Dense,
Conv, Embedding or Linear-like cell. Parameters legitimately zero or constant at
initialisation (class tokens, position embeddings, layer-scale gammas, biases, normalisation
parameters) are never weight matrices here. The values come from
:class:`~graphaudit.evidence.values.ParameterValues`: read once, never changed.

Example:
    >>> from mindspore import nn
    >>> from graphaudit.checks.context import AuditContext
    >>> [(w.parameter.name, w.owner, w.constant) for w in weight_matrices(AuditContext.build(nn.Dense(3, 2, weight_init="ones")))]
    [('weight', 'Dense', 1.0)]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphaudit import graph as g
from graphaudit.evidence.values import ParameterValues, ValueSummary

if TYPE_CHECKING:
    from graphaudit.checks._shared.grouping import Group
    from graphaudit.checks.context import AuditContext

__all__ = ["WeightMatrix", "described", "weight_matrices"]

# Names of weight matrices, whatever cell holds them.
WEIGHT_NAMES = frozenset({"weight", "embedding_table", "kernel", "w", "weights"})
# Cells whose matrix parameters are weights (Dense, Conv2d, Conv1dTranspose, Embedding, Linear...).
LAYER_CLASS = re.compile(r"Dense|Linear|Conv|Embedding|Projection|MatMul", re.IGNORECASE)
# Parameters legitimately zero or constant at initialisation, by name.
EXEMPT_NAME = re.compile(
    r"cls_token|class_token|dist_token|mask_token|reg_token|register_token|pos_embed|position"
    r"|layer_scale|gamma|beta|bias|moving_|running_|norm",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class WeightMatrix:
    """One weight matrix: its node, the Parameter, the class of the cell holding it, its values."""

    node: str
    parameter: Any
    owner: str
    values: ValueSummary

    @property
    def constant(self) -> float | None:
        return self.values.constant


def _leaf(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _owner_if_weight_matrix(ctx: AuditContext, node: str, param: Any) -> str | None:
    """The owner's class name when *param* is a trainable weight matrix, else None."""
    if not param.requires_grad:
        return None
    name = param.name  # a property that does work on every access
    if EXEMPT_NAME.search(name) or any(EXEMPT_NAME.search(p) for p in g.node_paths(ctx.graph, node)):
        return None
    classes: list[str] = []  # of the owners, as g.owners_of lists them
    attribute_names: set[str] = set()
    for owner, _, d in ctx.graph.in_edges(node, data=True):  # one pass for both
        if d["kind"] == g.OWNS:
            classes.append(ctx.graph.nodes[owner]["class_name"])
            attribute_names.add(d["name"])
    named = _leaf(name) in WEIGHT_NAMES or bool(attribute_names & WEIGHT_NAMES)
    layer = next((c for c in classes if LAYER_CLASS.search(c)), None)
    if layer is None and not named:
        return None
    return layer or (classes[0] if classes else "?")


def _weight_matrices(ctx: AuditContext) -> list[WeightMatrix]:
    summaries = ctx.need(ParameterValues).summaries
    found = []
    for node, param in ctx.parameters():
        summary = summaries.get(node)
        if summary is None:
            continue
        owner = _owner_if_weight_matrix(ctx, node, param)
        if owner is not None:
            found.append(WeightMatrix(node, param, owner, summary))
    return found


def weight_matrices(ctx: AuditContext) -> list[WeightMatrix]:
    """Every weight matrix of the network, in graph order (computed once per audit)."""
    return ctx.shared(_weight_matrices)


def described(group: Group, items: Sequence[WeightMatrix]) -> str:
    """A finding's words for *items* (grouped as *group*): one matrix with its shape, or all of them with their layers."""
    if len(items) == 1:
        return (
            f"{group.names[0]}{group.note} (shape {tuple(items[0].parameter.shape)}, in a {items[0].owner})"
        )
    owners = " and ".join(sorted({item.owner for item in items}))
    return f"the {len(items)} weight matrices of {group.subject} ({group.listing()}, in {owners} layers)"
