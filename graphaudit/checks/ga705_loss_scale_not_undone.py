"""GA705 loss-scale-not-undone."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.lossscale import LossScaleSetup
from graphaudit.findings import Cause, Finding


@dataclass(frozen=True)
class LossScaleNotUndone(Cause):
    """Gradients multiplied by the train step's loss scale and divided by another factor by the optimizer."""

    wrapper: str  # the train-step cell's class
    sens: float  # what it multiplies the gradients by
    optimizer_loss_scale: float  # what the optimizer divides them by
    factor: float  # what every update is multiplied by: sens / optimizer_loss_scale
    manager_scale: float | None = None  # the scale of the Model's FixedLossScaleManager that built the step

    def message(self) -> str:
        by = (
            f"a FixedLossScaleManager({self.manager_scale:g}, drop_overflow_update=False) of the Model"
            if self.manager_scale is not None
            else f"{self.wrapper}(sens={self.sens:g})"
        )
        factor = self.factor
        return (
            f"The gradients are multiplied by {self.sens:g} ({by}) and the optimizer divides them by its "
            f"loss_scale={self.optimizer_loss_scale:g}: every update is "
            + (f"{factor:g} times too large" if factor > 1 else f"{1 / factor:g} times too small")
            + f" (the learning rate is effectively {factor:g}x the one given)."
        )

    def fix(self) -> str:
        return (
            f"Build the optimizer with loss_scale={self.sens:g} (the same value as the loss scale), or use "
            "a TrainOneStepWithLossScaleCell / DynamicLossScaleManager, which divide the gradients back themselves."
        )


@register(
    "GA705",
    "loss-scale-not-undone",
    severity="error",
    needs=(LossScaleSetup,),
    once="one finding per training step: its loss scale and its optimizer",
    causes=(LossScaleNotUndone,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Gradients scaled by the train step and not divided back (or divided by another factor) by the optimizer.

    What it does:
        Reads the train-step cell the setup trains with: ``nn.TrainOneStepCell(..., sens=S)``
        multiplies every gradient by ``S`` and does not divide it back; ``mindspore.train.Model``
        builds exactly that for ``FixedLossScaleManager(S, drop_overflow_update=False)``. The
        optimizer divides by its own ``loss_scale``. It reports when the two differ.

    Why is this bad:
        MindSpore's documentation of ``FixedLossScaleManager`` says it: with
        ``drop_overflow_update=False`` the optimizer's ``loss_scale`` must be set to the same
        value. Otherwise every update is ``S / loss_scale`` times too large (128x with the
        manager's default 128): the learning rate is silently multiplied, training diverges
        or needs a learning rate 100x smaller than the recipe's. Nothing warns (read on
        MindSpore 2.10: ``mindspore/train/amp.py``, ``nn.Optimizer``'s ``loss_scale``).

    Example:
        ```python
        manager = ms.FixedLossScaleManager(1024.0, drop_overflow_update=False)
        model = ms.Model(net, loss_fn, nn.Momentum(net.trainable_params(), 0.01, 0.9), loss_scale_manager=manager)
        ```

    Use instead:
        ```python
        optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9, loss_scale=1024.0)
        model = ms.Model(net, loss_fn, optimizer, loss_scale_manager=manager)
        ```
    """
    scaling = ctx.need(LossScaleSetup).scaling
    if scaling.unscales or scaling.sens == scaling.optimizer_loss_scale:
        return
    cause = LossScaleNotUndone(
        scaling.wrapper,
        float(scaling.sens),
        float(scaling.optimizer_loss_scale),
        float(scaling.effective_factor),
        float(scaling.manager_scale)
        if scaling.manager is not None and scaling.manager_scale is not None
        else None,
    )
    yield ctx.finding("error", "(root)", cause, (g.cell_node(""),))
