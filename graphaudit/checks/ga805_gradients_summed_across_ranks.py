"""GA805 gradients-summed-across-ranks."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import ROOT
from graphaudit.checks.context import AuditContext
from graphaudit.distributed.fingerprint import RankSetup
from graphaudit.evidence.ranks import RankSetups
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted, listing

#: Parallel modes in which MindSpore's train cells insert a DistributedGradReducer.
_REDUCING_MODES = ("data_parallel", "hybrid_parallel")


def sums_by_reducer(setup: RankSetup) -> bool | None:
    """Whether this rank sums its gradients across ranks in its reducer (``True``) or by its parallel context
    (``False``); ``None`` when it averages or cannot be seen.

    Example:
        >>> sums_by_reducer(RankSetup("data_parallel", False))
        False
        >>> sums_by_reducer(RankSetup("data_parallel", True)), sums_by_reducer(RankSetup("stand_alone", False))
        (None, None)
    """
    if setup.reducer == "sum":
        return True
    if setup.reducer is None and setup.parallel_mode in _REDUCING_MODES and setup.gradients_mean is False:
        return False
    return None


@dataclass(frozen=True)
class GradientsSummedAcrossRanks(Cause):
    """Data-parallel ranks that sum their gradients across ranks instead of averaging them."""

    world: int  # how many ranks the job has
    summing: tuple[str, ...]  # the ranks seen summing, by label
    reducer_sums: bool  # the first of them sums in its train cell's reducer (mean=False), else by its context
    parallel_mode: str  # the first one's parallel_mode

    def message(self) -> str:
        n = self.world
        how = (
            "its train cell's DistributedGradReducer has mean=False"
            if self.reducer_sums
            else f"parallel_mode={self.parallel_mode} with gradients_mean=False"
        )
        return (
            f"The gradients are summed across the {n} data-parallel ranks, not averaged: on "
            f"{listing(self.summing, None)} {how}. Every step moves the "
            f"weights {n} times as far as the learning rate says ({counted(len(self.summing), 'rank')} of {n} "
            "seen summing)."
        )

    def fix(self) -> str:
        return (
            "Average the gradients: ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, "
            "gradients_mean=True) (or nn.DistributedGradReducer(params, mean=True) in a custom step); if the loss "
            "is divided by the group size on purpose, average in the reducer instead and keep the loss as written."
        )


@register(
    "GA805",
    "gradients-summed-across-ranks",
    severity="error",
    needs=(RankSetups,),
    causes=(GradientsSummedAcrossRanks,),
    once="one finding per job: every rank that sums is named in it",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Data-parallel ranks sum their gradients instead of averaging them: the learning rate is N times the one written.

    What it does:
        Reads every rank's parallel context (``mindspore.get_auto_parallel_context``) and,
        when the audited network is a ``TrainOneStepCell``, its ``DistributedGradReducer``;
        the ranks' setups travel with their fingerprints (GA801's ``AllGather`` under
        ``msrun``, or ``peers=`` files written by ``fingerprint(net)``). With two ranks or more
        it reports a rank whose reducer sums: ``parallel_mode`` ``DATA_PARALLEL`` (or
        ``HYBRID_PARALLEL``) with ``gradients_mean=False`` (MindSpore's default), for the train
        cells ``Model`` and ``TrainOneStepCell`` build, or a reducer built with ``mean=False``.

    Why is this bad:
        The reducer's all-reduce adds the N ranks' gradients; without ``gradients_mean`` it
        does not divide by N, so every step moves the weights N times as far as the learning
        rate says (on 8 devices, a rate of 0.1 acts as 0.8). The rate tuned on one device
        diverges or oscillates on N, and nothing raises: the loss just behaves as if the rate
        were wrong. PyTorch's DistributedDataParallel averages by default; MindSpore's
        ``gradients_mean`` defaults to ``False``. A loss divided by the group size on purpose
        cancels the sum: GA805 cannot see that division, so it reports it too — then
        ``ignore = ["GA805"]``, or better, average in the reducer and keep the loss as written.

    Example:
        ```python
        init()
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL)  # gradients_mean=False
        model = ms.train.Model(net, loss_fn, optimizer)
        ```

    Use instead:
        ```python
        init()
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
        model = ms.train.Model(net, loss_fn, optimizer)
        ```
    """
    setups = ctx.need(RankSetups).setups
    if len(setups) < 2:
        return
    summing = [
        (label, setup, by_reducer)
        for label, setup in setups
        if (by_reducer := sums_by_reducer(setup)) is not None
    ]
    if not summing:
        return
    cells = ctx.cell_nodes_by_path()
    reducer = cells.get("grad_reducer")
    _, first, by_reducer = summing[0]
    cause = GradientsSummedAcrossRanks(
        len(setups), tuple(label for label, _, _ in summing), by_reducer, str(first.parallel_mode)
    )
    yield ctx.finding("error", "grad_reducer" if reducer is not None else ROOT, cause, [reducer or cells[""]])
