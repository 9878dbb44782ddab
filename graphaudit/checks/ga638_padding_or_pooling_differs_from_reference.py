"""GA638 padding-or-pooling-differs-from-reference."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.reference_attributes import AttributeDiffers, differences, gathered, value_text
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.reference_attributes import AttributeDifference, ReferenceAttributes
from graphaudit.findings import Finding, Severity

_WHAT = {
    "pads": "pads",
    "stride": "stride",
    "dilation": "dilation",
    "ceil_mode": "ceil_mode",
    "count_include_pad": "count_include_pad",
    "function": "pooling kind",
    "padding_mode": "padding mode",
}


@dataclass(frozen=True)
class SamePaddingAtStride(AttributeDiffers):
    """A convolution or pooling padding 'same' at a stride above 1 where the original gives its padding.

    *halves*: the original pads half the kernel on each side, as 'same' does on odd input sizes.
    """

    halves: bool

    def message(self) -> str:
        return (
            f"{self.cells_text()}: pads 'same' at a stride above 1 where the original pads {value_text(self.reference)}: "
            + (
                "the same on odd input sizes, shifted by one on even ones (MindSpore pads the end first)."
                if self.halves
                else "another padding on any input."
            )
        )

    def fix(self) -> str:
        if self.halves:
            return f"Give pad_mode='pad', padding={self.reference[0][0]} as the original does."
        return "Give the original's padding with pad_mode='pad'."


@dataclass(frozen=True)
class PaddingOrPoolingDiffers(AttributeDiffers):
    """A convolution's or pooling's padding, stride, dilation, rounding or pooling kind other than the original's."""

    attribute: (
        str  # "pads", "stride", "dilation", "ceil_mode", "count_include_pad", "function", "padding_mode"
    )

    def message(self) -> str:
        return (
            f"{self.cells_text()}: {_WHAT[self.attribute]} {value_text(self.port)} where the original's is "
            f"{value_text(self.reference)}."
        )

    def fix(self) -> str:
        theirs = self.reference
        fixes = {
            "pads": "Give the original's padding (pad_mode='pad', padding=... as torch's; 'valid' for 0).",
            "stride": "Give the original's stride (torch's pools default to the kernel size, MindSpore's to 1).",
            "ceil_mode": f"Give ceil_mode={theirs}, as the original.",
            "count_include_pad": f"Give count_include_pad={theirs}, as the original.",
            "function": f"Use the original's pooling ({theirs}).",
        }
        return fixes.get(self.attribute, f"Give the original's {_WHAT[self.attribute]}.")


@register(
    "GA638",
    "padding-or-pooling-differs-from-reference",
    severity="error",
    also=("warning",),
    needs=(ReferenceAttributes,),
    causes=(SamePaddingAtStride, PaddingOrPoolingDiffers),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A convolution or pooling pads, strides or rounds otherwise than the original's, or pools another way.

    What it does:
        With ``reference=`` a dump folder (``python -m graphaudit.reference``) or an ONNX
        export, compares each convolution and pooling cell of the same kernel as its original
        module: the padding (MindSpore's ``pad_mode="same"`` spelt out where it does not
        depend on the input, at stride 1, against torch's ``padding``), the stride (MindSpore's
        pools default to stride 1, torch's to the kernel), the dilation, ``ceil_mode``,
        ``count_include_pad`` (when there is padding to count) and max against average
        pooling. An error; ``"same"`` at a stride above 1 against the original's symmetric
        half-kernel padding is a warning, for it pads alike on odd input sizes only. The same
        difference in many cells is one finding.

    Why is this bad:
        The layer sees its input shifted, or its output has another size, or its border
        values are averaged otherwise: every value after it differs from the original's
        with the same weights, and a size that differs breaks or silently reshapes what
        follows.

    Example:
        ```python
        self.conv = nn.Conv2d(3, 64, 3, stride=2)        # pad_mode="same"; the original: padding=0
        self.pool = nn.MaxPool2d(3, 2)                   # the original: ceil_mode=True
        ```

    Use instead:
        ```python
        self.conv = nn.Conv2d(3, 64, 3, stride=2, pad_mode="valid")
        self.pool = nn.MaxPool2d(3, 2, ceil_mode=True)
        ```
    """
    found = differences(ctx, tuple(_WHAT), ("conv", "pool"))
    yield from gathered(ctx, found, _say)


def _say(d: AttributeDifference, cells: tuple[str, ...]) -> tuple[Severity, AttributeDiffers]:
    mine, theirs = d.difference.port, d.difference.reference
    if d.difference.attribute == "pads" and mine == "same" and isinstance(theirs, tuple):
        halves = all(a == b for a, b in theirs)
        return "warning" if halves else "error", SamePaddingAtStride.between(d, cells, halves)
    return "error", PaddingOrPoolingDiffers.between(d, cells, d.difference.attribute)
