"""GA343 padding-reaches-real-tokens."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.dependency import MIXING, moved, subject_and_nodes, where, whose_output
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dependency import DependencyProbe, PaddingDependencies
from graphaudit.findings import Cause, Finding


@dataclass(frozen=True)
class PaddingReachesRealTokens(Cause):
    """The outputs at real positions move when the tokens the attention mask marks as padding change."""

    entry: (
        str  # the first cell whose output moves while its inputs do not ("(root)": the network's construct)
    )
    mask_input: str  # the attention mask's argument
    padded_by_probe: bool  # the probe padded sample 0 (the batch given had no padding)
    judged: str  # the cell whose output was judged ("": the network's)
    change: float  # how far the real positions' outputs moved, relative to their largest value
    tolerance: float  # the bound (relative) below which nothing moved

    def message(self) -> str:
        padded = "padded by the probe" if self.padded_by_probe else "padded in the batch given"
        return (
            f"Changing the tokens the attention mask ({self.mask_input}) marks as padding ({padded}) moves "
            f"{whose_output(self.judged)} at the real positions {moved(self.change, self.tolerance)}: the mask is not "
            f"applied. The padding first gets in at {where(self.entry)}."
        )

    def fix(self) -> str:
        return (
            f"Apply {self.mask_input} in {where(self.entry)}: give padded keys a large negative score before the "
            "softmax ((1 - mask) * -1e4 added, or masked_fill where mask == 0), broadcast over the heads and the "
            "queries."
        )


@register(
    "GA343",
    "padding-reaches-real-tokens",
    severity="error",
    needs=(
        PaddingDependencies,
        DependencyProbe,
    ),
    causes=(PaddingReachesRealTokens,),
    defers_to={"GA340": MIXING},
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Changing padded tokens changes the outputs at real ones: the attention mask is ignored.

    What it does:
        With the attention mask's argument named (``mask_input="attention_mask"``), changes
        the tokens at the positions the mask marks as padding (0) — sample 0 is left-padded
        by a quarter of its length when the batch given has no padding — in inference mode,
        and reports when the outputs at the real positions move beyond the run-to-run noise
        of the same pass. It names the first cell whose output moves while its inputs do not.
        Not reported when GA340 finds the samples mixing: what moved cannot be told apart
        then; fix that first.

    Why is this bad:
        A model that reads its padding computes another output for the same sentence
        depending on how long the other sentences of its batch were: training, evaluation
        and serving (batched differently) disagree, silently. The mask was passed but not
        used, used with the wrong polarity, or broadcast over the wrong axis.

    Example:
        ```python
        def construct(self, x, mask):
            scores = ops.matmul(q, k.swapaxes(-1, -2)) / math.sqrt(d)
            return ops.matmul(ops.softmax(scores, axis=-1), v)         # mask never applied
        ```

    Use instead:
        ```python
        def construct(self, x, mask):
            scores = ops.matmul(q, k.swapaxes(-1, -2)) / math.sqrt(d)
            scores = scores + (1.0 - mask[:, None, None, :]) * -1e4     # padded keys get no weight
            return ops.matmul(ops.softmax(scores, axis=-1), v)
        ```
    """
    dependence = ctx.need(PaddingDependencies).padding
    if not dependence.found:
        return
    probe = ctx.need(DependencyProbe)
    subject, nodes = subject_and_nodes(dependence)
    cause = PaddingReachesRealTokens(
        subject,
        str(probe.mask_input),
        bool(probe.result.padded_by_probe),
        dependence.judged,
        float(dependence.change),
        float(dependence.tolerance),
    )
    yield ctx.finding("error", subject, cause, nodes)
