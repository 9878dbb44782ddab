"""GA636 activation-differs-from-reference."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.reference_attributes import AttributeDiffers, differences, gathered, value_text
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.reference_attributes import AttributeDifference, ReferenceAttributes
from graphaudit.findings import Finding, Severity

_GELU = {"none": "the exact (erf) GELU", "tanh": "the tanh approximation of GELU", "fast": "FastGelu"}


@dataclass(frozen=True)
class GeluApproximationDiffers(AttributeDiffers):
    """A GELU computed another way than the original's: the tanh approximation, the exact erf, or FastGelu."""

    def message(self) -> str:
        mine, theirs = self.port, self.reference
        return (
            f"{self.cells_text()}: computes {_GELU.get(mine, mine)} where the original computes "
            f"{_GELU.get(theirs, theirs)}"
        ) + (" (MindSpore's nn.GELU() default is approximate=True)." if mine == "tanh" else ".")

    def fix(self) -> str:
        if self.reference == "none":
            return "Use nn.GELU(approximate=False) (or mint.nn.GELU())"
        return "Use nn.GELU(approximate=True) (or mint.nn.GELU(approximate='tanh'))."


@dataclass(frozen=True)
class ActivationFunctionDiffers(AttributeDiffers):
    """An activation of another kind than the original's (ReLU for GELU...)."""

    def message(self) -> str:
        return (
            f"{self.cells_text()}: is {self.port} where the original's is {self.reference}: another function than "
            "the weights were trained with."
        )

    def fix(self) -> str:
        return f"Use the original's activation ({self.reference})."


@dataclass(frozen=True)
class SoftmaxAxisDiffers(AttributeDiffers):
    """A softmax over another axis than the original's."""

    def message(self) -> str:
        return f"{self.cells_text()}: softmax over axis {self.port} where the original's is over axis {self.reference}."

    def fix(self) -> str:
        return f"Give the original's axis: nn.Softmax(axis={self.reference})."


@dataclass(frozen=True)
class NegativeSlopeDiffers(AttributeDiffers):
    """A LeakyReLU with another negative slope than the original's."""

    def message(self) -> str:
        return (
            f"{self.cells_text()}: negative slope {value_text(self.port)} where the original's is "
            f"{value_text(self.reference)}."
        )

    def fix(self) -> str:
        return f"Give the original's slope: nn.LeakyReLU(alpha={value_text(self.reference)})."


_CAUSES: dict[str, type[AttributeDiffers]] = {
    "approximate": GeluApproximationDiffers,
    "function": ActivationFunctionDiffers,
    "dim": SoftmaxAxisDiffers,
    "negative_slope": NegativeSlopeDiffers,
}


@register(
    "GA636",
    "activation-differs-from-reference",
    severity="error",
    needs=(ReferenceAttributes,),
    causes=(GeluApproximationDiffers, ActivationFunctionDiffers, SoftmaxAxisDiffers, NegativeSlopeDiffers),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """An activation computes another function than the original's: GELU's tanh against erf, another kind, slope or axis.

    What it does:
        With ``reference=`` a dump folder (``python -m graphaudit.reference``) or an ONNX
        export, compares each activation cell with its original module: the function
        (ReLU, GELU, SiLU...), GELU's approximation (MindSpore's ``nn.GELU()`` is the tanh
        approximation by default, torch's ``nn.GELU()`` the exact erf), LeakyReLU's slope
        (MindSpore's ``alpha``, torch's ``negative_slope``) and a Softmax's axis. The same
        difference in many cells is one finding.

    Why is this bad:
        The layer computes another function than the one the weights were trained with:
        the outputs differ in every layer after it (the tanh GELU by up to about 1e-3 per
        activation, compounding through the blocks; another kind or axis entirely).

    Example:
        ```python
        self.act = nn.GELU()                 # the original: torch.nn.GELU(), exact
        ```

    Use instead:
        ```python
        self.act = nn.GELU(approximate=False)
        ```
    """
    found = differences(ctx, ("function", "approximate", "negative_slope", "dim"), ("activation", "softmax"))
    yield from gathered(ctx, found, _say)


def _say(d: AttributeDifference, cells: tuple[str, ...]) -> tuple[Severity, AttributeDiffers]:
    return "error", _CAUSES.get(d.difference.attribute, NegativeSlopeDiffers).between(d, cells)
