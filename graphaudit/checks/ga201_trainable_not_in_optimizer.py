"""GA201 trainable-not-in-optimizer."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.context import AuditContext
from graphaudit.findings import Finding


@register("GA201", "trainable-not-in-optimizer")
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A trainable parameter that the optimizer does not update.

    What it does:
        Lists every parameter with ``requires_grad=True`` that is not among
        ``optimizer.parameters``. It is an error, unless the design declares the parameter
        frozen (``Spec(frozen=[...])``), when it is reported as info.

    Why is this bad:
        ``TrainOneStepCell`` computes gradients only for ``optimizer.parameters``: a parameter
        left out keeps its initial value for the whole training, silently. MindSpore's guide
        also freezes weights *by* leaving them out, which is why a declared freeze is fine.

    Example:
        ```python
        optimizer = nn.Momentum(net.backbone.trainable_params(), 0.01, 0.9)  # head forgotten
        ```

    Use instead:
        ```python
        optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)
        ```

        or declare the freeze: ``Spec(frozen=["backbone.*"])``, and prefer also setting
        ``requires_grad=False`` on frozen parameters.
    """
    if ctx.optimizer is None:
        return
    for node, param in ctx.parameters():
        if not param.requires_grad or ctx.in_optimizer(param):
            continue
        if ctx.spec.is_frozen(param.name):
            yield ctx.finding(
                "info",
                param.name,
                f"{param.name} is trainable but not in the optimizer; the design declares it frozen, "
                "so leaving it out is the freeze.",
                f"Also set {param.name}.requires_grad = False so that no gradient is computed for it.",
                [node],
            )
            continue
        yield ctx.finding(
            "error",
            param.name,
            f"{param.name} is trainable (requires_grad=True) but not in the optimizer: "
            "TrainOneStepCell never updates it, so it keeps its initial value.",
            f"Build the optimizer from net.trainable_params() (or add {param.name} to a parameter group); "
            "if it is meant to stay fixed, set requires_grad=False or declare it in Spec(frozen=[...]).",
            [node],
        )
