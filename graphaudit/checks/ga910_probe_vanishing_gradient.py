"""GA910 probe-vanishing-gradient."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.curves import VANISHING, depth_profile
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.probe import ProbeStep
from graphaudit.findings import Cause, Finding


@dataclass(frozen=True)
class VanishingGradient(Cause):
    """Relative gradients that fall through the depth, from the output side to the input side."""

    names_subjects = True
    inner: str  # the weight nearest the input
    outer: str  # the weight nearest the output
    inner_relative: float  # its ‖g‖/‖w‖
    outer_relative: float
    tensors: int  # the weight tensors of the profile
    ratio: float  # the profile's inner over outer ratio
    bound: float  # the ratio below which gradients vanish

    def message(self) -> str:
        return (
            f"The relative gradient ‖g‖/‖w‖ falls from {self.outer_relative:.3g} at {self.outer} (output side) "
            f"to {self.inner_relative:.3g} at {self.inner} (input side) over {self.tensors} weight "
            f"tensors: a ratio of {self.ratio:.3g}, below {self.bound:g}. The layers near the input barely "
            "learn: the gradients vanish through the depth."
        )

    def fix(self) -> str:
        return (
            "Use activations that do not saturate (ReLU, GELU instead of sigmoid/tanh), add normalisation "
            "(BatchNorm, LayerNorm) or residual connections, or an initialisation suited to the activation "
            "(HeNormal for ReLU, XavierUniform for tanh)."
        )


@register(
    "GA910",
    "probe-vanishing-gradient",
    severity="warning",
    needs=(ProbeStep,),
    causes=(VanishingGradient,),
    once="one finding per network: the gradient profile from its output to its input",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Gradients shrink by more than 1e5 from the output layers to the input layers.

    What it does:
        From the probe's first step that updated (``probe=True`` or ``probe=N``), computes
        each weight's relative gradient ``‖g‖/‖w‖``, orders the weights from the input to the
        output (the order the traced pass first reads them) and reports when the input side
        (median of the first few) is more than 1e5 times smaller than the output side.
        Embedding tables (only the rows of the batch get a gradient) are left out.

    Why is this bad:
        Layers near the input then learn 1e5 times slower than the head: the network trains
        as if it were shallow, or not at all (MindInsight's debugger watches the same
        condition, "gradient vanishing"). Measured on MindSpore 2.10: a 12-layer sigmoid MLP
        gives 2e-11; networks with normalisation or residual paths give the opposite
        (resnet18 124, densenet121 87, mobilenet_v2 81); a 12-layer ReLU MLP with the default
        initialisation 1.5e-4 (not reported). The bound leaves a wide margin, but one batch
        is one sample of the gradients: a warning.

    Example:
        ```python
        layers = []
        for _ in range(12):
            layers += [nn.Dense(64, 64), nn.Sigmoid()]
        net = nn.SequentialCell(layers)
        ```

    Use instead:
        ```python
        for _ in range(12):
            layers += [nn.Dense(64, 64), nn.BatchNorm1d(64), nn.ReLU()]
        ```
    """
    step = ctx.need(ProbeStep)
    first = next((s for s in step.steps if s.applied), None)
    if first is None:
        return
    profile = depth_profile(ctx, step.parameters, first)
    if not profile.vanishing:
        return
    params = step.parameters
    inner, outer = params[profile.positions[0]], params[profile.positions[-1]]
    cause = VanishingGradient(
        inner.subject,
        outer.subject,
        float(profile.relative[0]),
        float(profile.relative[-1]),
        len(profile.relative),
        float(profile.ratio),
        VANISHING,
    )
    yield ctx.finding(
        "warning", inner.subject, cause, (inner.node, outer.node), subjects=(inner.subject, outer.subject)
    )
