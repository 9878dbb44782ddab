"""GA503 batchnorm-never-uses-batch-statistics."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.cells import affine_frozen, is_batchnorm
from graphaudit.checks._shared.grouping import cell_group
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.evidence.mode import IntendedMode
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing, pronouns


@dataclass(frozen=True)
class FrozenBatchNorms(Cause):
    """BatchNorms built with use_batch_statistics=False whose gamma and beta are frozen: frozen on purpose."""

    names_subjects = True
    names: tuple[str, ...]  # the BatchNorm cells' paths
    class_name: str  # the class of the first of them

    def message(self) -> str:
        one, they = len(self.names) == 1, pronouns(len(self.names))
        return (
            f"{_described(self.names, self.class_name)} never {'uses' if one else 'use'} batch statistics "
            f"(use_batch_statistics=False) and {they.possessive} gamma/beta are frozen: "
            f"{'a frozen BatchNorm' if one else 'frozen BatchNorms'}."
        )

    def fix(self) -> str:
        return "Nothing to do if the moving statistics come from a pretrained checkpoint."


@dataclass(frozen=True)
class BatchNormIgnoresBatchStatistics(Cause):
    """BatchNorms built with use_batch_statistics=False in a network audited for training."""

    names_subjects = True
    names: tuple[str, ...]  # the BatchNorm cells' paths
    class_name: str  # the class of the first of them

    def message(self) -> str:
        they = pronouns(len(self.names))
        return (
            f"{_described(self.names, self.class_name)} {they.be} built with use_batch_statistics=False: in training "
            + (
                "it normalises with its moving statistics instead of the batch's and never updates them."
                if len(self.names) == 1
                else "they normalise with their moving statistics instead of the batch's and never update them."
            )
        )

    def fix(self) -> str:
        they = pronouns(len(self.names))
        return (
            f"Build {listing(self.names)} with use_batch_statistics=None (the default) so that set_train() controls "
            f"{they.object}; if {they.subject} {they.be} meant to be frozen, also set "
            "requires_grad=False on gamma and beta."
        )


@register(
    "GA503",
    "batchnorm-never-uses-batch-statistics",
    severity="error",
    also=("info",),
    needs=(IntendedMode,),
    uses=(DeclaredDesign,),
    causes=(FrozenBatchNorms, BatchNormIgnoresBatchStatistics),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A BatchNorm built with use_batch_statistics=False, in a network audited for training.

    What it does:
        With ``mode="train"``, reports every BatchNorm whose ``use_batch_statistics`` is
        ``False``. It is an error, unless the BatchNorm's ``gamma`` and ``beta`` are frozen
        (a deliberately frozen BatchNorm, reported as info). Other modes are not concerned.

    Why is this bad:
        ``use_batch_statistics=False`` overrides ``set_train``: the BatchNorm always
        normalises with its moving mean and variance and never updates them, in training as
        well (checked on MindSpore 2.10: after ``set_train(True)``, a batch of mean 3, std 2
        still comes out with mean 2.95, std 2.02, and ``moving_mean`` stays 0). With freshly
        initialised statistics (mean 0, variance 1) the layer normalises nothing.

    Example:
        ```python
        self.bn = nn.BatchNorm2d(64, use_batch_statistics=False)
        ```

    Use instead:
        ```python
        self.bn = nn.BatchNorm2d(64)  # use_batch_statistics=None: follows set_train()
        ```

        For a frozen BatchNorm (fine-tuning from pretrained statistics), also freeze its
        ``gamma`` and ``beta`` (``requires_grad=False``).
    """
    if ctx.mode != "train":
        return
    frozen: list[str] = []
    broken: list[str] = []
    for node, _ in g.nodes_of_kind(ctx.graph, g.CELL):
        cell = ctx.structure.cells[node]
        if is_batchnorm(cell) and getattr(cell, "use_batch_statistics", None) is False:
            (frozen if affine_frozen(ctx, node) else broken).append(node)
    # One use_batch_statistics=False in a block's constructor is one cause, however many blocks.
    if frozen:
        group = cell_group(ctx, frozen)
        cause = FrozenBatchNorms(group.names, type(ctx.structure.cells[group.nodes[0]]).__name__)
        yield ctx.finding("info", group.subject, cause, frozen, subjects=group.names)
    if broken:
        group = cell_group(ctx, broken)
        cause = BatchNormIgnoresBatchStatistics(
            group.names, type(ctx.structure.cells[group.nodes[0]]).__name__
        )
        yield ctx.finding("error", group.subject, cause, broken, subjects=group.names)


def _described(names: tuple[str, ...], class_name: str) -> str:
    """``bn (BatchNorm2d)`` or ``3 BatchNorm cells (a, b and c)``."""
    if len(names) == 1:
        return f"{names[0]} ({class_name})"
    return f"{len(names)} BatchNorm cells ({listing(names)})"
