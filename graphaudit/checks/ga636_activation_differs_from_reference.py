"""GA636 activation-differs-from-reference."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.reference_attributes import differences, gathered, value_text
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.reference_attributes import AttributeDifference, ReferenceAttributes
from graphaudit.findings import Finding


@register("GA636", "activation-differs-from-reference", severity="error", needs=(ReferenceAttributes,))
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


def _say(d: AttributeDifference, cells: str) -> tuple[str, str, str]:
    mine, theirs = d.difference.port, d.difference.reference
    attribute = d.difference.attribute
    if attribute == "approximate":
        words = {"none": "the exact (erf) GELU", "tanh": "the tanh approximation of GELU", "fast": "FastGelu"}
        return (
            "error",
            f"{cells}: computes {words.get(mine, mine)} where the original computes {words.get(theirs, theirs)}"
            + (" (MindSpore's nn.GELU() default is approximate=True)." if mine == "tanh" else "."),
            "Use nn.GELU(approximate=False) (or mint.nn.GELU())"
            if theirs == "none"
            else "Use nn.GELU(approximate=True) (or mint.nn.GELU(approximate='tanh')).",
        )
    if attribute == "function":
        return (
            "error",
            f"{cells}: is {mine} where the original's is {theirs}: another function than the weights were trained with.",
            f"Use the original's activation ({theirs}).",
        )
    if attribute == "dim":
        return (
            "error",
            f"{cells}: softmax over axis {mine} where the original's is over axis {theirs}.",
            f"Give the original's axis: nn.Softmax(axis={theirs}).",
        )
    return (
        "error",
        f"{cells}: negative slope {value_text(mine)} where the original's is {value_text(theirs)}.",
        f"Give the original's slope: nn.LeakyReLU(alpha={value_text(theirs)}).",
    )
