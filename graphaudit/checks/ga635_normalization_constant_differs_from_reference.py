"""GA635 normalization-constant-differs-from-reference."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.reference_attributes import AttributeDiffers, differences, gathered, value_text
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.reference_attributes import AttributeDifference, ReferenceAttributes
from graphaudit.findings import Finding, Severity

#: An epsilon this large (and ten times the other or more) is no rounding guard any more: it
#: changes the normalised values of any channel whose variance is small.
LARGE_EPS = 1e-3


@dataclass(frozen=True)
class MomentumInOtherConvention(AttributeDiffers):
    """A normalisation's momentum that is the original's number written in the other framework's convention."""

    def message(self) -> str:
        mine, theirs = self.port, self.reference
        return (
            f"{self.cells_text()}: momentum weighs each batch's statistics {mine:.6g} (torch's convention) where the "
            f"original's momentum={theirs:.6g} weighs them {theirs:.6g}: the original's number written in the "
            "other framework's convention (MindSpore's nn.BatchNorm momentum is 1 - torch's), so the running "
            "statistics follow each batch instead of averaging."
        )

    def fix(self) -> str:
        return (
            f"Give momentum={1 - self.reference:.6g} (MindSpore's nn weighs the running statistics: 1 - torch's "
            "momentum), or use mindspore.mint.nn, which takes torch's number."
        )


@dataclass(frozen=True)
class NormalizationMomentumDiffers(AttributeDiffers):
    """A normalisation's momentum other than the original's: its running statistics average over another span."""

    def message(self) -> str:
        return (
            f"{self.cells_text()}: momentum weighs each batch's statistics {value_text(self.port)} (torch's "
            f"convention), the original's {value_text(self.reference)}: the running statistics average over another "
            "span."
        )

    def fix(self) -> str:
        if self.reference is None:
            return "Give the original's momentum."
        return f"Give the original's momentum (MindSpore's nn: momentum={1 - self.reference:.6g})."


@dataclass(frozen=True)
class NormalizationEpsilonDiffers(AttributeDiffers):
    """A normalisation's epsilon other than the original's (*large*: 1e-3 or more, ten times the other's)."""

    norm: str  # the layer's kind ("batchnorm", "layernorm", "groupnorm")
    large: bool

    def message(self) -> str:
        return f"{self.cells_text()}: eps is {self.port:.3g} where the original's is {self.reference:.3g}" + (
            ": that large an epsilon changes the normalised values of every channel of small variance."
            if self.large
            else ": the normalised values differ slightly from those the weights were trained with."
        )

    def fix(self) -> str:
        name = "epsilon" if self.norm == "layernorm" else "eps"
        return f"Give the original's epsilon: {name}={self.reference:.3g}."


@register(
    "GA635",
    "normalization-constant-differs-from-reference",
    severity="error",
    also=("warning",),
    needs=(ReferenceAttributes,),
    confirms="GA709",  # GA709 guesses the convention from the number alone; the original's says it
    keeps_message="both",
    causes=(MomentumInOtherConvention, NormalizationMomentumDiffers, NormalizationEpsilonDiffers),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A BatchNorm's or LayerNorm's epsilon or momentum differs from the original's, or is in the other convention.

    What it does:
        With ``reference=`` a dump folder (``python -m graphaudit.reference``) or an ONNX
        export, which record each layer's attributes, compares each normalisation cell's
        ``eps`` and ``momentum`` with its original module's, in torch's convention:
        MindSpore's ``nn.BatchNorm2d(momentum=0.9)`` is torch's ``momentum=0.1`` (MindSpore
        weighs the running statistics, torch the batch's; ``mint.nn`` takes torch's). A
        momentum written as the other framework's number (``0.1`` in ``mindspore.nn``) is an
        error; an epsilon of 1e-3 or more that is ten times the other's is an error; any
        other difference is a warning. The same difference in many cells is one finding.

    Why is this bad:
        A momentum in the other convention makes the running statistics follow each batch
        (0.9 of it) instead of averaging: evaluation uses the last batch's statistics. An
        epsilon other than the original's changes every normalised value of a channel whose
        variance is small; converted weights were trained with the original's.

    Example:
        ```python
        self.bn = nn.BatchNorm2d(64, momentum=0.1)     # torch's 0.1, read as MindSpore's
        self.norm = nn.LayerNorm((768,))               # MindSpore's default epsilon 1e-7; the original's 1e-12
        ```

    Use instead:
        ```python
        self.bn = nn.BatchNorm2d(64, momentum=0.9)
        self.norm = nn.LayerNorm((768,), epsilon=1e-12)
        ```
    """
    found = differences(ctx, ("eps", "momentum"), ("batchnorm", "layernorm", "groupnorm"))
    yield from gathered(ctx, found, _say)


def _say(d: AttributeDifference, cells: tuple[str, ...]) -> tuple[Severity, AttributeDiffers]:
    mine, theirs = d.difference.port, d.difference.reference
    if d.difference.attribute == "momentum":
        if (
            mine is not None
            and theirs is not None
            and abs(mine + theirs - 1) < 1e-6
            and abs(theirs - 0.5) > 1e-6
        ):
            return "error", MomentumInOtherConvention.between(d, cells)
        return "warning", NormalizationMomentumDiffers.between(d, cells)
    large = max(mine, theirs) >= LARGE_EPS and max(mine, theirs) >= 10 * min(mine, theirs)
    return "error" if large else "warning", NormalizationEpsilonDiffers.between(
        d, cells, d.difference.kind, bool(large)
    )
