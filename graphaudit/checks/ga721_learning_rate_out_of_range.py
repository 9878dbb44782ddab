"""GA721 learning-rate-out-of-range."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.lr_groups import group_of_schedule
from graphaudit.checks._shared.lr_ranges import RANGES, family_of
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.optimizer import OptimizerView
from graphaudit.evidence.schedule import LearningRates
from graphaudit.findings import Cause, Finding

#: Networks below this many trained parameters are not fine-tuned at the rates of large pretrained models.
SMALL_NETWORK = 10_000_000
#: The lowest plausible peak rate of a family for such a small network (a warning below it).
SMALL_NETWORK_FLOOR = {"adam": 1e-5}


@dataclass(frozen=True)
class LearningRateOutOfRange(Cause):
    """An optimizer's (peak) learning rate outside the usual or plausible range of its family.

    Its ``direction`` is its side: ``"too large"`` above the range, ``"too small"`` below (GA907
    and GA908, which say ``"too large"``, fold only into a rate above it).
    """

    optimizer: str  # the optimizer's class
    family: str  # the family's name ("Adam-like")
    schedule: str  # "fixed" or the kind of schedule read for its peak
    rate: float  # the fixed rate, or the schedule's peak
    group: int | None  # the parameter group, when the optimizer has several
    group_subject: str  # what that group holds
    side: str  # "above" or "below"
    range_name: str  # "usual" or "plausible"
    low: float
    high: float
    usual_low: float
    usual_high: float
    source: str  # where the family's usual rates come from
    network_millions: float | None = None  # a small network's size, when it lowered the plausible floor

    @property
    def direction(self) -> str:
        return "too large" if self.side == "above" else "too small"

    def message(self) -> str:
        kind = "fixed learning rate" if self.schedule == "fixed" else "peak learning rate"
        group = f" for group {self.group} ({self.group_subject})" if self.group is not None else ""
        word = self.range_name
        if self.network_millions is not None:
            word = f"plausible (for a network of {self.network_millions:.2g}M parameters)"
        return (
            f"{self.optimizer} ({self.family}) has a {kind} of {self.rate:.3g}{group}, {self.side} the {word} "
            f"range {self.low:g} to {self.high:g} of its family (usual: {self.source})."
        )

    def fix(self) -> str:
        return (
            f"Use a learning rate within {self.usual_low:g} to {self.usual_high:g} for {self.family} optimizers "
            "(or check that a rate meant for another optimizer was not carried over)."
        )


def _trained_size(ctx: AuditContext) -> int:
    return sum(int(p.size) for p in ctx.optimizer_parameters)


@register(
    "GA721",
    "learning-rate-out-of-range",
    severity="warning",
    also=("info",),
    needs=(LearningRates,),
    uses=(OptimizerView,),
    causes=(LearningRateOutOfRange,),
    once="one finding per learning rate of the optimizer: each parameter group's rate is set on its own, its parameters listed",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A learning rate far outside the range its optimizer family trains with (Adam at 0.1, SGD at 1e-7).

    What it does:
        Reads the peak learning rate of each parameter group of the optimizer, as GA914-GA916
        read the schedules (a fixed rate, the largest value of a per-step list, or of a
        ``LearningRateSchedule`` over its steps: a warm-up is judged by the rate it reaches;
        ``total_steps=`` sets how far a schedule cell is read), and compares it with the ranges of the
        optimizer's family. A warning outside the *plausible* range, info outside the *usual*:

        | family | usual | plausible |
        | --- | --- | --- |
        | SGD, Momentum, ASGD | 1e-4 to 1 | 1e-6 to 10 |
        | Adam, AdamW, AdamWeightDecay, AdaMax, LazyAdam | 1e-5 to 1e-2 | 1e-7 to 0.03 |
        | LAMB | 1e-4 to 0.05 | 1e-6 to 0.2 |
        | RMSProp | 1e-5 to 0.1 | 1e-7 to 1 |
        | Adagrad | 1e-4 to 0.5 | 1e-6 to 5 |
        | Adadelta | 0.01 to 10 | 1e-4 to 100 |

        Other optimizers (LARS, which scales the rate per layer, FTRL, Thor...) are not judged.
        For a network of fewer than 10M trained parameters an Adam-like rate below 1e-5 is a
        warning: rates of 1e-6 are those of fine-tuning large pretrained models (RLHF and DPO
        of language models of a billion parameters and more), not of training a small one.

    Why is this bad:
        A rate two orders of magnitude too large diverges or oscillates (Adam's step is about
        the rate itself, whatever the gradient's scale: 0.1 moves every weight by 0.1 per step);
        one far too small trains so slowly that the run looks stuck. The usual ranges come from
        the optimizers' papers and common recipes: SGD 0.1 x batch/256 for ResNets (Goyal et al.
        2017, up to 3.2 at batch 8192), Adam 1e-3 (Kingma & Ba 2015) with 1e-4 to 5e-4 for
        transformers and 1e-5 to 5e-5 for fine-tuning, RMSProp 1e-3 (Hinton's lecture 6e) and
        0.256 at batch 4096 for EfficientNet (Tan & Le 2019), Adagrad 0.01-0.1 (Duchi et al. 2011), Adadelta 1.0
        (Zeiler 2012); the plausible ranges widen them by one to two orders of magnitude. An
        unsuitable learning rate is a fault AutoTrainer (ICSE'21) repairs and DeepDiagnosis
        (ICSE'22) reports from the training symptoms it causes; here it is read before
        training. With ``probe=`` steps the rate's effect is measured, and what the probe
        confirms joins this finding: GA908's update-to-weight ratios and GA907's loss curve,
        with their severity when it is worse (a rate above its range; probe steps too large do not
        join a rate below it, which stays its own finding).

    Example:
        ```python
        optimizer = nn.Adam(net.trainable_params(), learning_rate=0.1)     # an SGD rate given to Adam
        ```

    Use instead:
        ```python
        optimizer = nn.Adam(net.trainable_params(), learning_rate=1e-3)
        ```
    """
    optimizer = ctx.optimizer
    family = family_of(optimizer)
    if family is None:
        return
    ranges = RANGES[family]
    schedules = ctx.need(LearningRates).schedules
    small = family in SMALL_NETWORK_FLOOR and _trained_size(ctx) < SMALL_NETWORK
    for schedule in schedules:
        peak = schedule.peak
        low, high = ranges.plausible
        if small:
            low = SMALL_NETWORK_FLOOR[family]  # the fine-tuning rates of large pretrained models
        usual_low, usual_high = ranges.usual
        if not schedule.values or peak != peak:  # nothing read, or NaN: no size to judge
            continue
        if low <= peak <= high:
            if usual_low <= peak <= usual_high:
                continue
            severity, bounds, word = "info", ranges.usual, "usual"
        else:
            severity, bounds, word = "warning", (low, high), "plausible"
        if peak <= 0:
            continue  # a rate that never rises above 0 has no size to judge: it does not train at all
        group = group_of_schedule(ctx, schedule)
        name = type(optimizer).__name__
        cause = LearningRateOutOfRange(
            name,
            ranges.name,
            schedule.kind,
            peak,
            schedule.group if len(schedules) > 1 else None,
            group.subject,
            "above" if peak > bounds[1] else "below",
            word,
            bounds[0],
            bounds[1],
            usual_low,
            usual_high,
            ranges.source,
            _trained_size(ctx) / 1e6 if small and peak < low else None,
        )
        yield ctx.finding(severity, name, cause, group.graph_nodes, subjects=(name, *group.names))
