"""GA503 batchnorm-never-uses-batch-statistics."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.cells import affine_frozen, is_batchnorm
from graphaudit.checks._shared.grouping import holder, listing
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.evidence.mode import IntendedMode
from graphaudit.findings import Finding


@register(
    "GA503",
    "batchnorm-never-uses-batch-statistics",
    severity="error",
    also=("info",),
    needs=(IntendedMode,),
    uses=(DeclaredDesign,),
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
            (frozen if affine_frozen(ctx, cell) else broken).append(node)
    # One use_batch_statistics=False in a block's constructor is one cause, however many blocks.
    if frozen:
        what, paths = _described(ctx, frozen)
        yield ctx.finding(
            "info",
            paths[0] if len(paths) == 1 else holder(paths),
            f"{what} never {'uses' if len(paths) == 1 else 'use'} batch statistics (use_batch_statistics=False) "
            f"and {'its' if len(paths) == 1 else 'their'} gamma/beta are frozen: "
            f"{'a frozen BatchNorm' if len(paths) == 1 else 'frozen BatchNorms'}.",
            "Nothing to do if the moving statistics come from a pretrained checkpoint.",
            frozen,
            subjects=paths,
        )
    if broken:
        what, paths = _described(ctx, broken)
        one = len(paths) == 1
        yield ctx.finding(
            "error",
            paths[0] if one else holder(paths),
            f"{what} {'is' if one else 'are'} built with use_batch_statistics=False: in training "
            + (
                "it normalises with its moving statistics instead of the batch's and never updates them."
                if one
                else "they normalise with their moving statistics instead of the batch's and never update them."
            ),
            f"Build {listing(paths)} with use_batch_statistics=None (the default) so that set_train() controls "
            f"{'it' if one else 'them'}; if {'it is' if one else 'they are'} meant to be frozen, also set "
            "requires_grad=False on gamma and beta.",
            broken,
            subjects=paths,
        )


def _described(ctx: AuditContext, nodes: list[str]) -> tuple[str, list[str]]:
    """``bn (BatchNorm2d)`` or ``3 BatchNorm cells (a, b and c)``, and the cells' paths."""
    paths = [ctx.cell_path(node) for node in nodes]
    if len(nodes) == 1:
        return f"{paths[0]} ({type(ctx.structure.cells[nodes[0]]).__name__})", paths
    return f"{len(nodes)} BatchNorm cells ({listing(paths)})", paths
