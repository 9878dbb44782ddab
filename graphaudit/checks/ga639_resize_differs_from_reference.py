"""GA639 resize-differs-from-reference."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.reference_attributes import differences, gathered, value_text
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.reference_attributes import AttributeDifference, ReferenceAttributes
from graphaudit.findings import Finding


@register("GA639", "resize-differs-from-reference", severity="error", needs=(ReferenceAttributes,))
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


def _say(d: AttributeDifference, cells: str) -> tuple[str, str, str]:
    mine, theirs = d.difference.port, d.difference.reference
    if d.difference.attribute == "mode":
        return (
            "error",
            f"{cells}: interpolates {mine} where the original interpolates {theirs}.",
            f"Give the original's mode ({theirs}).",
        )
    return (
        "error",
        f"{cells}: align_corners={value_text(mine)} where the original's is {value_text(theirs)}: the input "
        "is sampled on another grid.",
        f"Give align_corners={theirs}, as the original.",
    )
