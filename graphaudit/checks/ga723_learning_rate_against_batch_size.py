"""GA723 learning-rate-against-batch-size."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.batching import batch_steps
from graphaudit.checks._shared.lr_groups import group_of_schedule
from graphaudit.checks._shared.lr_ranges import family_of
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import TrainingData
from graphaudit.evidence.optimizer import OptimizerView
from graphaudit.evidence.schedule import LearningRates
from graphaudit.findings import Cause, Finding

#: The reference of the linear scaling rule: 0.1 for a batch of 256 (Goyal et al. 2017).
REFERENCE_RATE, REFERENCE_BATCH = 0.1, 256
#: How far above (warning) and below (info) the linear-scaling rate a rate may be.
ABOVE, BELOW = 100.0, 1 / 200


@dataclass(frozen=True)
class LearningRateAgainstBatchSize(Cause):
    """An SGD-family rate far from the linear scaling rule's rate for the pipeline's batch size.

    Its ``direction`` is its side: ``"too large"`` above the rule's rate, ``"too small"`` below.
    """

    optimizer: str  # the optimizer's class
    rate: float  # the group's (peak) learning rate
    batch_size: int
    pipeline_step: str  # the path of the pipeline's batch step
    scaled: float  # the linear scaling rule's rate for the batch size
    group: int | None  # the parameter group, when the optimizer has several
    group_subject: str  # what that group holds

    @property
    def ratio(self) -> float:
        return self.rate / self.scaled

    @property
    def direction(self) -> str:
        return "too large" if self.ratio > 1 else "too small"

    def message(self) -> str:
        side = f"{self.ratio:.0f} times" if self.ratio > 1 else f"1/{1 / self.ratio:.0f} of"
        group = f" for group {self.group} ({self.group_subject})" if self.group is not None else ""
        return (
            f"{self.optimizer} trains at a learning rate of {self.rate:.3g}{group} with batches of {self.batch_size} "
            f"({self.pipeline_step}): {side} the {self.scaled:.3g} of the linear scaling rule (0.1 per 256 samples)."
        )

    def fix(self) -> str:
        batch = int(min(self.rate / REFERENCE_RATE * REFERENCE_BATCH, 4096)) or 1
        return (
            f"Scale the rate with the batch (about {self.scaled:.3g} for {self.batch_size}), or the batch with "
            f"the rate (about {batch} for {self.rate:.3g})."
        )


@register(
    "GA723",
    "learning-rate-against-batch-size",
    severity="warning",
    also=("info",),
    needs=(
        TrainingData,
        LearningRates,
    ),
    uses=(OptimizerView,),
    causes=(LearningRateAgainstBatchSize,),
    confirms="GA721",  # one rate far off, said twice: the batch size is why GA721's range is left
    keeps_message="both",
    once="one finding per learning rate of the optimizer: each parameter group's rate is set on its own",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """An SGD / Momentum learning rate 100x larger than the linear scaling rule gives for the batch size, or 200x smaller.

    What it does:
        For the SGD family (``SGD``, ``Momentum``, ``ASGD``), reads the batch size of the
        training pipeline (``dataset=``) and the peak learning rate of each group, and
        compares the rate with the linear scaling rule's ``0.1 x batch / 256``. A warning
        when the rate is more than 100 times that (``0.1`` with a batch of 2 or 1); info when it is
        less than 1/200 of it (``1e-4`` with a batch of 4096). Adaptive optimizers are not
        judged: their step does not scale linearly with the batch.

    Why is this bad:
        The gradient of a small batch is noisy, and the noise of an SGD step grows with
        ``rate / batch``: Goyal et al. (2017) train ResNet-50 at 0.1 per 256 images and scale
        the rate linearly with the batch (3.2 at 8192), and the rule holds well below 256 too
        (Smith & Le, ICLR 2018: the noise scale is ``rate x data / batch``). A rate 100 times
        above it is the ``lr = 0.1`` of a batch-256 recipe run with a batch of 1 or 2: the
        loss oscillates or diverges. A rate 200 times below it is a large batch that barely
        moves. The ratios are graphaudit's: two orders of magnitude, so that MindSpore's
        default ``nn.SGD`` rate (0.1) with a batch of 4 (64x) and every recipe of the mindcv
        model zoo (batch 32 to 256 with rates up to 0.5 or more) stay silent.

    Example:
        ```python
        train = dataset.batch(2)
        optimizer = nn.SGD(net.trainable_params(), learning_rate=0.1, momentum=0.9, nesterov=True)
        ```

    Use instead:
        ```python
        train = dataset.batch(64)
        optimizer = nn.SGD(net.trainable_params(), learning_rate=0.1 * 64 / 256, momentum=0.9, nesterov=True)
        ```
    """
    if family_of(ctx.optimizer) != "sgd":
        return
    steps = batch_steps(ctx.need(TrainingData).graph)
    if not steps:
        return
    step = steps[-1]
    scaled = REFERENCE_RATE * step.size / REFERENCE_BATCH
    name = type(ctx.optimizer).__name__
    schedules = ctx.need(LearningRates).schedules
    for schedule in schedules:
        peak = schedule.peak
        if not schedule.values or not peak > 0:
            continue
        ratio = peak / scaled
        if ratio <= ABOVE and ratio >= BELOW:
            continue
        severity = "warning" if ratio > ABOVE else "info"
        group = group_of_schedule(ctx, schedule)
        cause = LearningRateAgainstBatchSize(
            name,
            float(peak),
            step.size,
            step.path,
            scaled,
            schedule.group if len(schedules) > 1 else None,
            group.subject,
        )
        yield ctx.finding(severity, name, cause, group.graph_nodes, subjects=(name, *group.names))
