"""GA706 gradients-unscaled-twice."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.lossscale import LossScaleSetup
from graphaudit.findings import Cause, Finding


@dataclass(frozen=True)
class GradientsUnscaledTwice(Cause):
    """A loss-scale cell that divides the gradients back, and an optimizer whose loss_scale divides them again."""

    wrapper: str  # the loss-scale train-step cell's class
    optimizer_loss_scale: float

    def message(self) -> str:
        scale = self.optimizer_loss_scale
        return (
            f"{self.wrapper} already divides the gradients by its loss scale, and the optimizer divides them "
            f"again by its loss_scale={scale:g}: every update is {scale:g} times too small."
        )

    def fix(self) -> str:
        return (
            "Build the optimizer without loss_scale (the default 1.0) when training with "
            "TrainOneStepWithLossScaleCell or a DynamicLossScaleManager."
        )


@register(
    "GA706",
    "gradients-unscaled-twice",
    severity="error",
    needs=(LossScaleSetup,),
    once="one finding per training step: its loss-scale cell and its optimizer",
    causes=(GradientsUnscaledTwice,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A loss-scale cell that divides the gradients back, and an optimizer with a loss_scale that divides them again.

    What it does:
        With ``nn.TrainOneStepWithLossScaleCell`` (what ``DynamicLossScaleManager`` and
        ``FixedLossScaleManager(drop_overflow_update=True)`` give), reports an optimizer
        built with a ``loss_scale`` other than 1.

    Why is this bad:
        ``TrainOneStepWithLossScaleCell`` multiplies the loss by its scale and divides every
        gradient by the same scale before calling the optimizer (read on MindSpore 2.10,
        ``mindspore/nn/wrap/loss_scale.py``); an optimizer with ``loss_scale=S`` divides by
        ``S`` once more: every update is ``S`` times too small, and the network barely
        trains. The optimizer's ``loss_scale`` is only for ``FixedLossScaleManager`` with
        ``drop_overflow_update=False``.

    Example:
        ```python
        optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9, loss_scale=1024.0)
        step = nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(net, loss), optimizer,
                                                scale_sense=nn.DynamicLossScaleUpdateCell(1024.0, 2, 1000))
        ```

    Use instead:
        ```python
        optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)  # loss_scale=1: the cell unscales
        ```
    """
    scaling = ctx.need(LossScaleSetup).scaling
    if not scaling.unscales or scaling.optimizer_loss_scale == 1.0:
        return
    cause = GradientsUnscaledTwice(scaling.wrapper, float(scaling.optimizer_loss_scale))
    yield ctx.finding("error", "(root)", cause, (g.cell_node(""),))
