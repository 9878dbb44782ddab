"""GA310 probe-saturated-gradients-vanish."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.saturation import DEPTH, saturating_chains
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.probe import ProbeStep
from graphaudit.findings import Cause, Finding

if TYPE_CHECKING:
    from graphaudit.capture.training.probe_steps import StepRecord

#: The first layer's relative gradient below this fraction of the last layer's: the gradient has vanished.
RATIO = 0.01


@dataclass(frozen=True)
class SaturatedGradientVanished(Cause):
    """In a real training step, the first layer of a saturating chain got a far smaller relative gradient than its last."""

    names_subjects = True
    first_layer: str  # the chain's first weight layer (cell path)
    last_layer: str  # its last
    first_weight: str  # the first layer's weight, as the probe names it
    last_weight: str
    first_relative: float  # ‖g‖/‖w‖ of the first layer's weight in the step
    last_relative: float
    ratio: float  # first_relative / last_relative

    def message(self) -> str:
        return (
            f"In one real training step the relative gradient ‖g‖/‖w‖ of {self.first_weight} was "
            f"{self.first_relative:.3g}, {self.ratio:.2g} times that of {self.last_weight} ({self.last_relative:.3g}): "
            f"the gradient vanishes through the saturating activations between '{self.first_layer}' and "
            f"'{self.last_layer}'."
        )

    def fix(self) -> str:
        return "Use ReLU-like hidden activations, or add a normalisation before each sigmoid/tanh."


def _relative(
    ctx: AuditContext, step: ProbeStep, record: StepRecord, cell_node: str
) -> tuple[float, str] | None:
    """``‖g‖/‖w‖`` of the weight the cell owns, in the probe's step *record*, and its subject."""
    owned = {
        target
        for _, target, data in ctx.graph.out_edges(cell_node, data=True)
        if data["kind"] == g.OWNS and data.get("name") == "weight"
    }
    for position, probe in enumerate(step.parameters):
        if probe.node not in owned or position >= len(record.grad_norms):
            continue
        grad, weight = record.grad_norms[position], record.weight_norms[position]
        if grad is None or not weight > 0:
            return None
        return grad / weight, probe.subject
    return None


@register(
    "GA310",
    "probe-saturated-gradients-vanish",
    severity="warning",
    needs=(ProbeStep,),
    confirms="GA309",
    causes=(SaturatedGradientVanished,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """One real training step shows the gradient vanishing through a stack of saturating activations.

    What it does:
        For each chain of GA309 (4 or more sigmoid/tanh hidden activations between weight
        layers, with no normalisation or residual path), compares the relative gradient
        ``‖g‖/‖w‖`` of the first layer's weight with the last layer's, in the first step of
        ``probe=True`` (or ``probe=N``) that updated — the per-layer gradient norms of the
        multi-step probe, the measure GA910 uses over the whole network — and reports a
        warning when the first is below 1/100 of the last. It confirms GA309: the finding is
        merged into GA309's.

    Why is this bad:
        A first layer whose relative gradient is a hundredfold smaller than the last one's
        barely moves for the same learning rate: the depth of the stack is wasted, and the loss
        still goes down through the last layers only. The threshold (two orders of magnitude,
        within the chain) is graphaudit's: GA910 reports 1e-5 over the whole network, which a
        chain of saturating layers reaches only when it is long (12 sigmoid layers: 2e-11).
        AutoTrainer (ICSE'21) and DeepDiagnosis (ICSE'22) watch the same vanishing-gradient
        symptom over many training steps.

    Example:
        ```python
        net = nn.SequentialCell([nn.Dense(64, 64, activation="sigmoid") for _ in range(6)] + [nn.Dense(64, 10)])
        graphaudit.audit(net, optimizer, inputs=(x,), label=y, loss_fn=nn.CrossEntropyLoss(), probe=True)
        ```

    Use instead:
        ```python
        net = nn.SequentialCell([nn.Dense(64, 64, activation="relu") for _ in range(6)] + [nn.Dense(64, 10)])
        ```
    """
    step = ctx.need(ProbeStep)
    record = next((r for r in step.steps if r.applied), None)
    if record is None:
        return
    for chain in saturating_chains(ctx):
        if len(chain.activations) < DEPTH:
            continue
        first = _relative(ctx, step, record, chain.layers[0].cell_node)
        last = _relative(ctx, step, record, chain.layers[-1].cell_node)
        if first is None or last is None or last[0] <= 0:
            continue
        ratio = first[0] / last[0]
        if ratio >= RATIO:
            continue
        a, b = chain.layers[0].path, chain.layers[-1].path
        cause = SaturatedGradientVanished(
            a, b, first[1], last[1], float(first[0]), float(last[0]), float(ratio)
        )
        yield ctx.finding("warning", a, cause, [chain.layers[0].call, chain.layers[-1].call], subjects=(a, b))
