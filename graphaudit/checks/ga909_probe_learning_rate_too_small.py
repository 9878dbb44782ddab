"""GA909 probe-learning-rate-too-small."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.curves import RATIO_TOO_SMALL, UpdatesOfGroup, depth_profile, ratio_groups
from graphaudit.checks._shared.grouping import one_group
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.probe_curve import ProbeCurve
from graphaudit.findings import Finding
from graphaudit.text import listing


@dataclass(frozen=True)
class ProbeUpdatesTooSmall(UpdatesOfGroup):
    """Updates that barely change a parameter group's weights each step: its rate is too small."""

    def message(self) -> str:
        return (
            f"Each training step changes the weights of {self.which()} by only {self.median:.3g} "
            f"times their norm (median ‖Δw‖/‖w‖ over {self.weights} weight tensors, e.g. {listing(self.names)}); "
            "the rule of thumb is about 1e-3: at this pace the loss barely moves."
        )

    def fix(self) -> str:
        return (
            "Raise this group's learning rate (by 100x or more); if it is meant to stay nearly fixed, "
            "freeze it instead (requires_grad=False)."
        )


@register(
    "GA909",
    "probe-learning-rate-too-small",
    severity="warning",
    needs=(ProbeCurve,),
    causes=(ProbeUpdatesTooSmall,),
    once="one finding per parameter group of the optimizer: every weight it holds is measured in it",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Each step moves a parameter group's weights by less than a millionth of their size: the learning rate is too small.

    What it does:
        Runs N training steps on one batch (``probe=N``, N >= 2) and reports each optimizer
        parameter group whose median update-to-weight ratio ``‖Δw‖/‖w‖`` (over its weight
        matrices and kernels, and the steps that updated) is below 1e-6, unless the
        gradients vanish through the depth (GA910 reports that cause) or the rate is 0
        (GA901).

    Why is this bad:
        Karpathy's rule of thumb (CS231n "Neural Networks Part 3", "A Recipe for Training
        Neural Networks") puts a healthy ratio around 1e-3; a thousand times less means the
        loss converges so slowly that training looks stuck (the article's §2), and below
        ~6e-8 float32 rounds the update away. Measured on MindSpore 2.10: a small MLP with
        SGD(1e-6) gives 2e-8, with SGD(0.1) 2e-3; mindcv densenet121's slowest weights with
        Momentum(0.1) 7e-4. A warning: the numbers come from one small batch.

    Example:
        ```python
        optimizer = nn.SGD(net.trainable_params(), learning_rate=1e-7)
        ```

    Use instead:
        ```python
        optimizer = nn.SGD(net.trainable_params(), learning_rate=0.1)
        ```
    """
    curve = ctx.need(ProbeCurve)
    params = curve.parameters
    first = next((s for s in curve.steps if s.applied), None)
    if first is None or depth_profile(ctx, params, first).vanishing:
        return
    groups = ratio_groups(params, curve.steps)
    for group in groups:
        if group.median >= RATIO_TOO_SMALL or group.median == 0.0 or group.learning_rate == 0.0:
            continue
        (found,) = one_group(ctx, [params[i].node for i in group.positions])
        cause = ProbeUpdatesTooSmall(
            group.group if len(groups) > 1 else None,
            group.learning_rate,
            float(group.median),
            len(group.positions),
            found.names,
            RATIO_TOO_SMALL,
        )
        yield ctx.finding("warning", found.subject, cause, found.graph_nodes, subjects=found.names)
