"""GA637 dropout-rate-differs-from-reference."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.reference_attributes import AttributeDiffers, differences, gathered
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.reference_attributes import AttributeDifference, ReferenceAttributes
from graphaudit.findings import Finding, Severity


@dataclass(frozen=True)
class KeepProbabilityReadAsRate(AttributeDiffers):
    """A Dropout whose rate is one minus the original's: MindSpore 1.x's keep_prob taken for the rate."""

    def message(self) -> str:
        mine, theirs = self.port, self.reference
        return (
            f"{self.cells_text()}: drops {mine:.0%} of the activations where the original drops {theirs:.0%}: the "
            f"keep-probability {1 - mine:.3g} is read as the rate (MindSpore 1.x's keep_prob is 1 - p)."
        )

    def fix(self) -> str:
        return f"Give the rate: nn.Dropout(p={self.reference:.3g})."


@dataclass(frozen=True)
class DropoutRateDiffers(AttributeDiffers):
    """A Dropout that drops another share than the original's."""

    def message(self) -> str:
        return (
            f"{self.cells_text()}: drops {self.port:.0%} of the activations where the original drops "
            f"{self.reference:.0%}."
        )

    def fix(self) -> str:
        return f"Give the original's rate: nn.Dropout(p={self.reference:.3g})."


@register(
    "GA637",
    "dropout-rate-differs-from-reference",
    severity="error",
    also=("warning",),
    needs=(ReferenceAttributes,),
    confirms="GA701",  # GA701 guesses from a rate above half; the original's rate says it
    keeps_message="both",
    causes=(KeepProbabilityReadAsRate, DropoutRateDiffers),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A Dropout drops another share than the original's, or its keep-probability was read as the rate.

    What it does:
        With ``reference=`` a dump folder (``python -m graphaudit.reference``, which records
        each Dropout's ``p``), compares each dropout cell's rate with its original module's.
        A rate equal to one minus the original's is MindSpore 1.x's ``keep_prob`` taken for
        the rate (``nn.Dropout(p=0.9)`` for the original's ``p=0.1``, or the reverse): an
        error. Another rate is a warning. The same difference in many cells is one finding.
        (An ONNX export in eval mode has no Dropout to compare.)

    Why is this bad:
        Training drops 90 % of the activations where the original dropped 10 %, or the
        reverse: the port trains a far weaker, or unregularised, network. Inference is the
        same, so nothing shows until the training curves do.

    Example:
        ```python
        self.drop = nn.Dropout(p=0.9)        # the original's nn.Dropout(0.1); 0.9 was keep_prob
        ```

    Use instead:
        ```python
        self.drop = nn.Dropout(p=0.1)
        ```
    """
    yield from gathered(ctx, differences(ctx, ("p",), ("dropout",)), _say)


def _say(d: AttributeDifference, cells: tuple[str, ...]) -> tuple[Severity, AttributeDiffers]:
    mine, theirs = d.difference.port, d.difference.reference
    if abs(mine + theirs - 1) < 1e-6:
        return "error", KeepProbabilityReadAsRate.between(d, cells)
    return "warning", DropoutRateDiffers.between(d, cells)
