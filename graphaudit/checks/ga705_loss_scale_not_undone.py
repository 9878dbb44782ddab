"""GA705 loss-scale-not-undone."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.lossscale import LossScaleSetup
from graphaudit.findings import Finding


@register(
    "GA705",
    "loss-scale-not-undone",
    severity="error",
    needs=(LossScaleSetup,),
    once="one finding per training step: its loss scale and its optimizer",
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
    by = (
        f"a FixedLossScaleManager({scaling.manager_scale:g}, drop_overflow_update=False) of the Model"
        if scaling.manager is not None and scaling.manager_scale is not None
        else f"{scaling.wrapper}(sens={scaling.sens:g})"
    )
    factor = scaling.effective_factor
    yield ctx.finding(
        "error",
        "(root)",
        f"The gradients are multiplied by {scaling.sens:g} ({by}) and the optimizer divides them by its "
        f"loss_scale={scaling.optimizer_loss_scale:g}: every update is "
        + (f"{factor:g} times too large" if factor > 1 else f"{1 / factor:g} times too small")
        + f" (the learning rate is effectively {factor:g}x the one given).",
        f"Build the optimizer with loss_scale={scaling.sens:g} (the same value as the loss scale), or use "
        "a TrainOneStepWithLossScaleCell / DynamicLossScaleManager, which divide the gradients back themselves.",
        (g.cell_node(""),),
    )
