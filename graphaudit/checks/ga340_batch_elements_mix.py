"""GA340 batch-elements-mix."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.dependency import describe, judged_phrase, subject_and_nodes
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dependency import DependencyProbe
from graphaudit.findings import Finding


@register(
    "GA340",
    "batch-elements-mix",
    severity="error",
    needs=(DependencyProbe,),
    once="one finding per network: its batch dimension",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """One sample's output depends on another sample of the batch, in inference mode.

    What it does:
        Runs the network in inference mode (``set_train(False)``: BatchNorm on its moving
        statistics, no Dropout) on the batch given and on a copy whose last sample is
        changed, and reports when the outputs of the other samples move beyond the
        run-to-run noise of the same pass. It names the first cell, in the order cells
        return, whose output moves while its inputs do not: where the samples mix.

    Why is this bad:
        A ``reshape``/``view`` used where a ``transpose`` was meant (``x.reshape(T, B, C)`` on
        a ``(B, T, C)`` tensor), a reduction or a normalisation over the batch axis: sample
        *i*'s prediction then depends on which other samples share its batch. Nothing
        changes a shape or raises; the model trains, badly, and its predictions change with
        the batch size. In inference mode nothing may mix samples.

    Example:
        ```python
        def construct(self, x):                      # x: (B, T, C)
            b, t, c = x.shape
            heads = self.attend(x)                   # (B, T, C)
            return self.proj(heads.reshape(t, b, c).transpose(1, 0, 2))   # rows of other samples
        ```

    Use instead:
        ```python
        def construct(self, x):
            return self.proj(self.attend(x))         # keep (B, T, C); transpose, never reshape, to swap axes
        ```
    """
    dependence = ctx.need(DependencyProbe).result.results["batch"]
    if not dependence.found:
        return
    subject, nodes = subject_and_nodes(dependence)
    where = "the network's construct" if subject == "(root)" else f"'{subject}'"
    yield ctx.finding(
        "error",
        subject,
        f"In inference mode, {judged_phrase(dependence)} for one sample depends on the other samples of the "
        f"batch: changing the last sample moves the outputs of the others {describe(dependence)}. The samples "
        f"first mix in {where} (its output moves while its inputs do not).",
        f"Look in {where} for a reshape or view that swaps the batch axis with another (use transpose), or a "
        "reduction, softmax or normalisation over axis 0; every operation must keep the samples apart.",
        nodes,
    )
