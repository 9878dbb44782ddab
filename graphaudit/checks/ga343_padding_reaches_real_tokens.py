"""GA343 padding-reaches-real-tokens."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.dependency import describe, judged_phrase, subject_and_nodes
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dependency import DependencyProbe, PaddingDependencies
from graphaudit.findings import Finding


@register(
    "GA343",
    "padding-reaches-real-tokens",
    severity="error",
    needs=(
        PaddingDependencies,
        DependencyProbe,
    ),
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
    if probe.result.results["batch"].found:
        return  # the samples mix (GA340): what moves cannot be told apart; fix that first
    subject, nodes = subject_and_nodes(dependence)
    where = "the network's construct" if subject == "(root)" else f"'{subject}'"
    padded = "padded by the probe" if probe.result.padded_by_probe else "padded in the batch given"
    yield ctx.finding(
        "error",
        subject,
        f"Changing the tokens the attention mask ({probe.mask_input}) marks as padding ({padded}) moves "
        f"{judged_phrase(dependence)} at the real positions {describe(dependence)}: the mask is not applied. "
        f"The padding first gets in at {where}.",
        f"Apply {probe.mask_input} in {where}: give padded keys a large negative score before the softmax "
        "((1 - mask) * -1e4 added, or masked_fill where mask == 0), broadcast over the heads and the queries.",
        nodes,
    )
