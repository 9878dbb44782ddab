"""GA720 batch-of-one-with-batchnorm."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.cells import is_batchnorm
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.mode import IntendedMode
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted


@dataclass(frozen=True)
class BatchOfOneBeforeBatchNorm(Cause):
    """BatchNorm layers that normalise with batch statistics fed a batch of one sample in training."""

    path: str  # the BatchNorm the message names (the first left with one value per channel, else the first)
    shape: tuple[int, ...]  # the shape of its input
    more: int  # how many other BatchNorm layers get a batch of one
    one_value_per_channel: bool  # some BatchNorm gets one value per channel: it outputs its bias

    def message(self) -> str:
        others = (
            f" (and {counted(self.more, 'more BatchNorm layer', 'more BatchNorm layers')})"
            if self.more
            else ""
        )
        effect = (
            "it sees one value per channel, so its batch variance is 0 and it outputs its bias for every input"
            if self.one_value_per_channel
            else "it normalises each image with the statistics of that image alone, unlike the batches it will "
            "train on"
        )
        return (
            f"The network is audited for training with a batch of one sample: '{self.path}' gets a tensor of shape "
            f"{list(self.shape)}{others}, and once it trains (in training mode, where BatchNorm normalises with the "
            f"batch's statistics) {effect}."
        )

    def fix(self) -> str:
        return (
            "Audit (and train) with batches of several samples (at least 8 for BatchNorm statistics); if the batch "
            "must be 1, use nn.GroupNorm or nn.LayerNorm instead of BatchNorm."
        )


@register(
    "GA720",
    "batch-of-one-with-batchnorm",
    severity="warning",
    also=("error",),
    needs=(TracedPass, IntendedMode),
    causes=(BatchOfOneBeforeBatchNorm,),
    once="one finding per network: its batch of one, every BatchNorm it reaches listed",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A network audited for training with a batch of one sample, in front of BatchNorm layers that use batch statistics.

    What it does:
        When the audit is for training (``mode="train"``, or an optimizer given), reads the
        input of every BatchNorm called in the traced pass that normalises with the statistics
        of the batch (any but ``use_batch_statistics=False``). When a BatchNorm's input holds
        one sample, it reports: an error when that leaves one value per channel (``(1, C)``
        into ``BatchNorm1d``, ``(1, C, 1, 1)`` into ``BatchNorm2d``), a warning otherwise. One
        finding lists every such BatchNorm.

    Why is this bad:
        With one value per channel the batch variance is 0 and the mean is the value itself:
        the BatchNorm outputs its bias β for every input (measured on MindSpore 2.10: a
        ``BatchNorm1d`` in training maps a ``(1, 3)`` batch to zeros), so nothing before it can
        learn. With one image the statistics are those of its own pixels: the moving statistics
        used at inference drift from what training saw, and the noise of a batch of one makes
        the training unstable (Ioffe & Szegedy 2015 designed BatchNorm for mini-batches; Wu & He
        2018 show its error rising sharply below 8 samples per batch). The batch size as a
        training-configuration fault is among those AutoTrainer (ICSE'21) and DeepDiagnosis
        (ICSE'22) trace training problems back to.

    Example:
        ```python
        x = Tensor(one_image[None])                          # (1, 3, 224, 224)
        graphaudit.audit(resnet, optimizer, inputs=(x,), label=y, loss_fn=loss)
        ```

    Use instead:
        ```python
        x = Tensor(batch)                                    # (32, 3, 224, 224): audit the batch you train with
        # if the batch must be 1 (memory), use nn.GroupNorm instead of BatchNorm
        ```
    """
    if ctx.need(IntendedMode).mode != "train":
        return
    cells = ctx.structure.cells
    found: list[tuple[str, str, tuple[int, ...]]] = []
    for call, attrs in sorted(g.nodes_of_kind(ctx.graph, g.CALL), key=lambda item: item[1]["order"]):
        cell = cells.get(attrs.get("cell") or "")
        if cell is None or not is_batchnorm(cell) or getattr(cell, "use_batch_statistics", None) is False:
            continue
        flows = [d for _, _, d in ctx.graph.in_edges(call, data=True) if d["kind"] == g.FLOWS]
        if not flows:
            continue
        shape = g.shape_of(min(flows, key=lambda d: d["dst_slot"]))
        if len(shape) >= 2 and shape[0] == 1:
            found.append((call, attrs["path"], tuple(shape)))
    if not found:
        return
    single = [item for item in found if math.prod(item[2][2:]) == 1]
    severity = "error" if single else "warning"
    call, path, shape = (single or found)[0]
    cause = BatchOfOneBeforeBatchNorm(path, tuple(int(d) for d in shape), len(found) - 1, bool(single))
    yield ctx.finding(severity, path, cause, [c for c, _, _ in found], subjects=[p for _, p, _ in found])
