"""GA723 learning-rate-against-batch-size."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.batching import batch_steps
from graphaudit.checks._shared.lr_groups import group_of_schedule
from graphaudit.checks._shared.lr_ranges import family_of
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import TrainingData
from graphaudit.evidence.optimizer import OptimizerView
from graphaudit.evidence.schedule import LearningRates
from graphaudit.findings import Finding

#: The reference of the linear scaling rule: 0.1 for a batch of 256 (Goyal et al. 2017).
REFERENCE_RATE, REFERENCE_BATCH = 0.1, 256
#: How far above (warning) and below (info) the linear-scaling rate a rate may be.
ABOVE, BELOW = 100.0, 1 / 200


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
    for schedule in ctx.need(LearningRates).schedules:
        peak = schedule.peak
        if not schedule.values or not peak > 0:
            continue
        ratio = peak / scaled
        if ratio <= ABOVE and ratio >= BELOW:
            continue
        severity = "warning" if ratio > ABOVE else "info"
        side = f"{ratio:.0f} times" if ratio > 1 else f"1/{1 / ratio:.0f} of"
        yield ctx.finding(
            severity,
            name,
            f"{name} trains at a learning rate of {peak:.3g} with batches of {step.size} ({step.path}): {side} the "
            f"{scaled:.3g} of the linear scaling rule (0.1 per 256 samples).",
            f"Scale the rate with the batch (about {scaled:.3g} for {step.size}), or the batch with the rate "
            f"(about {int(min(peak / REFERENCE_RATE * REFERENCE_BATCH, 4096)) or 1} for {peak:.3g}).",
            group_of_schedule(ctx, schedule).graph_nodes,
        )
        return
