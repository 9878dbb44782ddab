"""GA634 reference-is-another-model."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.reference import ANOTHER_MODEL
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.reference import ReferenceWeights
from graphaudit.findings import Cause, Finding


@dataclass(frozen=True)
class ReferenceIsAnotherModel(Cause):
    """Fewer than half of the original's weights have a counterpart in the port: it is another model."""

    original: str  # the reference's label (its file's name)
    paired: int  # the original's weights paired with a port parameter
    weights: int  # the original's weights, integer buffers aside
    share: float  # paired / weights
    port_parameters: int  # the port's parameters

    def message(self) -> str:
        return (
            f"Only {self.paired} of the original's {self.weights} weights ({self.share:.0%}) have a counterpart "
            f"in the port ({self.port_parameters} parameters): {self.original} is not the original of this "
            "network, or the names and shapes of the two have almost nothing in common."
        )

    def fix(self) -> str:
        return (
            "Pass the original this network was ported from; if it is, give the pairs: "
            "reference_map={'port.name': 'original.name', ...}."
        )


@register(
    "GA634",
    "reference-is-another-model",
    severity="error",
    needs=(ReferenceWeights,),
    once="one finding per audit: there is one reference",
    causes=(ReferenceIsAnotherModel,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Most of the original's weights have no counterpart in the port: the reference is another model.

    What it does:
        Counts the original's weights (integer buffers aside) that the mapping of GA630
        pairs with a port parameter, and reports one error when fewer than half are paired,
        saying how many; GA630 and GA631 then say nothing, rather than one finding per
        weight of a model that was never this port's original.

    Why is this bad:
        Compared with the wrong original, every other finding about the port is noise: the
        reference file, or the network audited, is not the one meant.

    Example:
        ```python
        graphaudit.audit(resnet18(), reference="vit_base.safetensors")
        ```

    Use instead:
        ```python
        graphaudit.audit(resnet18(), reference="resnet18.safetensors")
        ```
    """
    weights = ctx.need(ReferenceWeights)
    share = weights.matched_fraction()
    if share >= ANOTHER_MODEL:
        return
    total = len(weights.reference_shapes) - len(weights.buffers)
    cause = ReferenceIsAnotherModel(
        weights.label, len(weights.mapping.pairs), total, float(share), len(weights.port_shapes)
    )
    yield ctx.finding("error", "(root)", cause, (ctx.cell_nodes_by_path()[""],))
