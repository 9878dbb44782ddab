"""GA908 probe-learning-rate-too-large."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.curves import RATIO_TOO_LARGE, UpdatesOfGroup, ratio_groups
from graphaudit.checks._shared.grouping import one_group
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.probe_curve import ProbeCurve
from graphaudit.findings import Finding
from graphaudit.text import listing


@dataclass(frozen=True)
class ProbeUpdatesTooLarge(UpdatesOfGroup):
    """Updates that change a parameter group's weights by more than their own norm each step: its rate is too large."""

    def message(self) -> str:
        return (
            f"Each training step changes the weights of {self.which()} by {self.median:.3g} times "
            f"their norm (median ‖Δw‖/‖w‖ over {self.weights} weight tensors and the probe's steps, e.g. "
            f"{listing(self.names)}); the rule of thumb is about 1e-3, and above {self.bound:g} the updates replace "
            "the weights instead of refining them."
        )

    def fix(self) -> str:
        return "Lower this group's learning rate (10x to 100x), or add a warm-up."


@register(
    "GA908",
    "probe-learning-rate-too-large",
    severity="warning",
    needs=(ProbeCurve,),
    causes=(ProbeUpdatesTooLarge,),
    confirms="GA721",
    keeps_message="both",
    direction="too large",  # the rate: never folded into a GA721 rate below its range
    once="one finding per parameter group of the optimizer: every weight it holds is measured in it",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Each step moves a parameter group's weights by more than their own size: the learning rate is too large.

    What it does:
        Runs N training steps on one batch (``probe=N``, N >= 2) and measures, for every
        weight matrix or kernel, the update-to-weight ratio ``‖Δw‖/‖w‖`` of each step that
        updated; it reports each optimizer parameter group whose median ratio is above 1.

    Why is this bad:
        Karpathy's rule of thumb (CS231n "Neural Networks Part 3", and "A Recipe for Training
        Neural Networks") puts a healthy ratio around 1e-3: each step nudges the weights. A
        ratio above 1 replaces them every step; the loss then oscillates or diverges instead
        of converging (the article's §2). The probe's batch is small and starts from
        initialisation, where ratios are much larger than in steady training (measured on
        MindSpore 2.10 with the usual recipes: resnet18/densenet121 with Momentum(0.1) or
        AdamW(1e-3) 0.007-0.08, mobilenet_v2 with Momentum(0.1) 0.43, a small MLP with Adam(1e-2) 0.09), so the bound is set 1000x
        above the rule of thumb; SGD(10) on that MLP gives 8. It remains a heuristic: a
        warning.

    Example:
        ```python
        optimizer = nn.SGD(net.trainable_params(), learning_rate=10.0)
        ```

    Use instead:
        ```python
        optimizer = nn.SGD(net.trainable_params(), learning_rate=0.1)
        ```
    """
    curve = ctx.need(ProbeCurve)
    params = curve.parameters
    groups = ratio_groups(params, curve.steps)
    for group in groups:
        if group.median <= RATIO_TOO_LARGE:
            continue
        (found,) = one_group(ctx, [params[i].node for i in group.positions])
        cause = ProbeUpdatesTooLarge(
            group.group if len(groups) > 1 else None,
            group.learning_rate,
            float(group.median),
            len(group.positions),
            found.names,
            RATIO_TOO_LARGE,
        )
        yield ctx.finding("warning", found.subject, cause, found.graph_nodes, subjects=found.names)
