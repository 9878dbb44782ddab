"""GA709 batchnorm-momentum-pytorch-convention."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted, listing, pronouns

CURRENT_BATCH = 0.5  # above this weight on the current batch, momentum was written the PyTorch way


def batch_weight(cell: Any) -> float | None:
    """The weight a MindSpore ``nn.BatchNorm*d`` gives the current batch in its moving statistics, or None.

    ``nn.BatchNorm2d(momentum=m)`` keeps ``1 - m`` and gives it to the ``ops.BatchNorm``
    primitive, which computes ``moving = (1 - w) * moving + w * batch`` (read and measured on
    MindSpore 2.10). ``mint.nn.BatchNorm*`` uses PyTorch's convention and is not read.
    """
    from mindspore.nn.layer.normalization import _BatchNorm

    if not isinstance(cell, _BatchNorm):
        return None
    primitive = vars(cell).get("bn_train")
    value = getattr(primitive, "momentum", None)
    if value is None:
        value = vars(cell).get("momentum")
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class BatchNormMomentumPyTorchConvention(Cause):
    """BatchNorms whose momentum was written with PyTorch's meaning: most of the weight on the current batch."""

    names_subjects = True
    cells: tuple[str, ...]  # their paths
    weight: float  # the weight the first gives the current batch (1 - MindSpore's momentum)

    def message(self) -> str:
        weight, they = self.weight, pronouns(len(self.cells))
        verb = "updates" if len(self.cells) == 1 else "update"
        return (
            f"{counted(len(self.cells), 'BatchNorm cell')} ({listing(self.cells)}) {verb} {they.possessive} moving "
            "statistics "
            f"with {weight:.0%} of the weight on the current batch (momentum={1 - weight:.2g}): MindSpore's "
            "momentum is the weight of the running value, PyTorch's the weight of the batch. The statistics used "
            "at inference follow the last batch."
        )

    def fix(self) -> str:
        weight = self.weight
        return (
            f"Write momentum={weight:.2g} (MindSpore's meaning of PyTorch's momentum={1 - weight:.2g}), or keep "
            "the default 0.9."
        )


@register(
    "GA709",
    "batchnorm-momentum-pytorch-convention",
    severity="warning",
    once="one finding per network: every BatchNorm built with the PyTorch momentum is listed in it",
    causes=(BatchNormMomentumPyTorchConvention,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A BatchNorm whose ``momentum`` was written with PyTorch's meaning: 90% of the weight on the current batch.

    What it does:
        Reports, as one finding, every ``mindspore.nn.BatchNorm1d/2d/3d`` and
        ``SyncBatchNorm`` built with ``momentum`` below 0.5, reading the weight that its
        ``ops.BatchNorm`` primitive gives the current batch.

    Why is this bad:
        The two frameworks define the word oppositely. In MindSpore 2.10 ``nn.BatchNorm2d``
        updates ``moving_mean = momentum * moving_mean + (1 - momentum) * batch_mean``
        (default ``momentum=0.9``); in PyTorch ``momentum`` is the weight of the batch
        (default 0.1). ``momentum=0.1`` ported from PyTorch puts 90% of the weight on the
        current batch: measured, one batch of 10s takes the moving mean from 0 to 9 (to 1
        with the default). The moving statistics then follow the last batch, and inference
        accuracy drops with no error. (MindSpore announces its default will move to 0.1 with
        PyTorch's meaning; the check reads the primitive's weight, whatever the convention.)

    Example:
        ```python
        self.bn = nn.BatchNorm2d(64, momentum=0.1)  # ported from torch.nn.BatchNorm2d(64, momentum=0.1)
        ```

    Use instead:
        ```python
        self.bn = nn.BatchNorm2d(64, momentum=0.9)
        ```
    """
    found = []
    for node, _ in g.nodes_of_kind(ctx.graph, g.CELL):
        weight = batch_weight(ctx.structure.cells[node])
        if weight is not None and weight > CURRENT_BATCH:
            found.append((node, weight))
    if not found:
        return
    paths = tuple(ctx.cell_path(node) for node, _ in found)
    cause = BatchNormMomentumPyTorchConvention(paths, float(found[0][1]))
    nodes = tuple(node for node, _ in found)
    yield ctx.finding("warning", paths[0] if len(paths) == 1 else "(root)", cause, nodes, subjects=paths)
