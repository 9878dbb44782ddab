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
from graphaudit.findings import Cause
from graphaudit.text import listing

if TYPE_CHECKING:
    from graphaudit.checks._shared.grouping import Group
    from graphaudit.checks.context import AuditContext

__all__ = ["WeightMatrices", "WeightMatrix", "described", "weight_matrices"]

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
    for owner, d in g.edges_in(ctx.graph, node, g.OWNS):  # one pass for both
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
    return WeightMatrices(**WeightMatrices.facts(group, items)).described()


@dataclass(frozen=True)
class WeightMatrices(Cause):
    """The facts the causes of GA601 and GA602 start from: which weight matrices (a base, not a cause)."""

    names_subjects = True
    subject: str  # the cell holding them all, or the lone matrix
    names: tuple[str, ...]  # the matrices' attribute paths
    note: str  # a lone matrix's Parameter.name, when it differs from its path
    shape: tuple[int, ...]  # the first matrix's shape
    owners: tuple[str, ...]  # the classes of the layers holding them, sorted, each once

    @classmethod
    def facts(cls, group: Group, items: Sequence[WeightMatrix]) -> dict[str, Any]:
        """The base's fields, read from *group* and its *items*: ``cls(**cls.facts(group, items), ...)``."""
        return {
            "subject": group.subject,
            "names": tuple(group.names),
            "note": group.note,
            "shape": tuple(int(d) for d in items[0].parameter.shape),
            "owners": tuple(sorted({item.owner for item in items})),
        }

    def described(self) -> str:
        """One matrix with its shape, or all of them with their layers."""
        if len(self.names) == 1:
            return f"{self.names[0]}{self.note} (shape {self.shape}, in a {self.owners[0]})"
        owners = listing(self.owners, None)
        return f"the {len(self.names)} weight matrices of {self.subject} ({listing(self.names)}, in {owners} layers)"
