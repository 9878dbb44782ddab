"""GA639 resize-differs-from-reference."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.reference_attributes import AttributeDiffers, differences, gathered, value_text
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.reference_attributes import AttributeDifference, ReferenceAttributes
from graphaudit.findings import Finding, Severity


@dataclass(frozen=True)
class InterpolationModeDiffers(AttributeDiffers):
    """An upsampling that interpolates another way (nearest, linear, cubic) than the original's."""

    def message(self) -> str:
        return (
            f"{self.cells_text()}: interpolates {self.port} where the original interpolates {self.reference}."
        )

    def fix(self) -> str:
        return f"Give the original's mode ({self.reference})."


@dataclass(frozen=True)
class AlignCornersDiffers(AttributeDiffers):
    """An upsampling with align_corners the other way than the original's: the input sampled on another grid."""

    def message(self) -> str:
        return (
            f"{self.cells_text()}: align_corners={value_text(self.port)} where the original's is "
            f"{value_text(self.reference)}: the input is sampled on another grid."
        )

    def fix(self) -> str:
        return f"Give align_corners={self.reference}, as the original."


@register(
    "GA639",
    "resize-differs-from-reference",
    severity="error",
    needs=(ReferenceAttributes,),
    causes=(InterpolationModeDiffers, AlignCornersDiffers),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """An upsampling interpolates otherwise than the original's: another mode, or ``align_corners`` the other way.

    What it does:
        With ``reference=`` a dump folder (``python -m graphaudit.reference``, which records
        each ``nn.Upsample``'s ``mode`` and ``align_corners``) or an ONNX export (``Resize``'s
        ``mode`` and ``coordinate_transformation_mode``), compares each ``nn.Upsample`` /
        ``mint.nn.Upsample`` cell with its original module: the interpolation (nearest,
        linear, cubic) and, where it interpolates, ``align_corners`` (MindSpore's ``None`` is
        ``False``, as torch's). The same difference in many cells is one finding.

    Why is this bad:
        ``align_corners=True`` samples the input on another grid: every upsampled value
        differs from the original's, most at the borders, and a segmentation or detection
        head trained with the original's grid is off by a fraction of a pixel everywhere.

    Example:
        ```python
        self.up = nn.Upsample(size=(12, 12), mode="bilinear", align_corners=True)  # the original: False
        ```

    Use instead:
        ```python
        self.up = nn.Upsample(size=(12, 12), mode="bilinear", align_corners=False)
        ```
    """
    yield from gathered(ctx, differences(ctx, ("mode", "align_corners"), ("resize",)), _say)


def _say(d: AttributeDifference, cells: tuple[str, ...]) -> tuple[Severity, AttributeDiffers]:
    if d.difference.attribute == "mode":
        return "error", InterpolationModeDiffers.between(d, cells)
    return "error", AlignCornersDiffers.between(d, cells)
