"""GA340 batch-elements-mix."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.dependency import moved, subject_and_nodes, where, whose_output
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dependency import DependencyProbe
from graphaudit.findings import Cause, Finding


@dataclass(frozen=True)
class BatchElementsMix(Cause):
    """In inference mode, one sample's output moves when another sample of the batch changes."""

    entry: (
        str  # the first cell whose output moves while its inputs do not ("(root)": the network's construct)
    )
    judged: str  # the cell whose output was judged ("": the network's)
    sample: int  # the sample whose change moved the others (-1: the last)
    batch: int  # the batch's size
    change: float  # how far the others moved, relative to the output's largest value
    tolerance: float  # the bound (relative) below which nothing moved

    def message(self) -> str:
        last = self.sample in (-1, self.batch - 1)
        changed = (
            "the last sample" if last else "the first sample" if self.sample == 0 else f"sample {self.sample}"
        )
        one_way = (
            ""
            if last
            else " (the last sample reaches none of them: the mix flows one way, towards later samples)"
        )
        return (
            f"In inference mode, {whose_output(self.judged)} for one sample depends on the other samples of the "
            f"batch: changing {changed} moves the outputs of the others{one_way} "
            f"{moved(self.change, self.tolerance)}. The samples first mix in {where(self.entry)} (its output moves "
            "while its inputs do not)."
        )

    def fix(self) -> str:
        return (
            f"Look in {where(self.entry)} for a reshape or view that swaps the batch axis with another (use "
            "transpose), a reduction, softmax or normalisation over axis 0, or a cumulative sum, shift or causal "
            "operation over axis 0 or over a (batch * length, ...) flattening; every operation must keep the samples "
            "apart."
        )


@register(
    "GA340",
    "batch-elements-mix",
    severity="error",
    needs=(DependencyProbe,),
    once="one finding per network: its batch dimension",
    confirms="GA344",  # a time-major LSTM fed (B, T, C) mixes the samples: GA344 names the cause
    causes=(BatchElementsMix,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """One sample's output depends on another sample of the batch, in inference mode.

    What it does:
        Runs the network in inference mode (``set_train(False)``: BatchNorm on its moving
        statistics, no Dropout) on the batch given and on a copy whose last sample is
        changed and whose samples are in reverse order (read back in the order given), and
        reports when the outputs of the other samples move beyond the run-to-run noise of
        the same pass. The reversal makes a mix that flows one way only (a cumulative sum or
        a shift over the samples) reach a judged sample either way; what moved is then told
        apart on passes in the order given (the last sample changed alone, the first, each
        other). It names the first cell, in the order cells return, whose output moves while
        its inputs do not: where the samples mix.

    Why is this bad:
        A ``reshape``/``view`` used where a ``transpose`` was meant (``x.reshape(T, B, C)`` on
        a ``(B, T, C)`` tensor), a reduction or a normalisation over the batch axis, a
        cumulative sum or causal convolution over a ``(B*T, C)`` flattening: sample *i*'s
        prediction then depends on which other samples share its batch. Nothing changes a
        shape or raises; the model trains, badly, and its predictions change with the batch
        size. In inference mode nothing may mix samples.

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
    result = ctx.need(DependencyProbe).result
    dependence = result.results["batch"]
    if not dependence.found:
        return
    subject, nodes = subject_and_nodes(dependence)
    cause = BatchElementsMix(
        subject,
        dependence.judged,
        int(dependence.sample),
        int(result.batch),
        float(dependence.change),
        float(dependence.tolerance),
    )
    yield ctx.finding("error", subject, cause, nodes)
