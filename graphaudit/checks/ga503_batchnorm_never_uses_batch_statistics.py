"""GA503 batchnorm-never-uses-batch-statistics."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.cells import affine_frozen, is_batchnorm
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
    for node, _ in g.nodes_of_kind(ctx.graph, g.CELL):
        cell = ctx.structure.cells[node]
        if not is_batchnorm(cell) or getattr(cell, "use_batch_statistics", None) is not False:
            continue
        path = ctx.cell_path(node)
        if affine_frozen(ctx, cell):
            yield ctx.finding(
                "info",
                path,
                f"{path} ({type(cell).__name__}) never uses batch statistics (use_batch_statistics=False) and "
                "its gamma/beta are frozen: a frozen BatchNorm.",
                "Nothing to do if the moving statistics come from a pretrained checkpoint.",
                [node],
            )
            continue
        yield ctx.finding(
            "error",
            path,
            f"{path} ({type(cell).__name__}) is built with use_batch_statistics=False: in training it "
            "normalises with its moving statistics instead of the batch's and never updates them.",
            f"Build {path} with use_batch_statistics=None (the default) so that set_train() controls it; "
            "if it is meant to be frozen, also set requires_grad=False on its gamma and beta.",
            [node],
        )
