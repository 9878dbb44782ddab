"""GA962 weights-drift-across-ranks."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.watch import parameter_nodes
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.training import RankDrift
from graphaudit.findings import Finding


@register(
    "GA962",
    "weights-drift-across-ranks",
    severity="error",
    needs=(RankDrift,),
    once="one finding per watched msrun job: every weight that drifted apart is listed in it",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Under msrun, the data-parallel ranks' weights drifted apart during the run.

    What it does:
        Every few sampled steps of a watched data-parallel run (and at the first), every rank
        hashes its weights (the fingerprints of GA801) and the hashes are exchanged with
        ``AllGather``; it reports the parameters that differ across ranks, from the first
        step they did. BatchNorm's moving statistics are not compared: each rank updates
        them from its own shard in the forward pass, so they rightly differ (``SyncBatchNorm``
        would keep them equal; it has no CPU kernel in MindSpore 2.10).

    Why is this bad:
        Data parallelism trains one model on every rank only while every rank applies the
        same averaged update to the same weights. The accuracy guide's §3.3 names weights
        that differ across nodes; GA801 checks them before training, this during it: a rank
        that skips the gradient all-reduce (no ``DistributedGradReducer``), clips its own
        gradients differently or keeps its own optimizer state drifts away silently.

    Example:
        ```python
        train = nn.TrainOneStepCell(net_with_loss, optimizer)  # no gradient reducer under msrun
        ```

    Use instead:
        ```python
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
        ```
    """
    drift = ctx.need(RankDrift)
    if not drift.drift:
        return
    step, names = drift.drift[0]
    yield ctx.finding(
        "error",
        names[0],
        f"The weights of the {drift.world_size} ranks drifted apart: at step {step} {len(names)} parameter(s) "
        f"differed ({', '.join(names[:6])}{', ...' if len(names) > 6 else ''}); "
        f"{len(drift.drift)} of {drift.checks} comparisons found differences.",
        "Average the gradients across ranks (DATA_PARALLEL with gradients_mean=True, or "
        "nn.DistributedGradReducer in a custom step) and give every rank the same optimizer and clipping.",
        parameter_nodes(ctx, list(names)),
        subjects=tuple(names),
    )
