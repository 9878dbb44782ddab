"""GA602 constant-initialized-weight."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import one_group
from graphaudit.checks._shared.weights import WeightMatrices, WeightMatrix, weight_matrices
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.values import ParameterValues
from graphaudit.findings import Finding


@dataclass(frozen=True)
class ConstantWeights(WeightMatrices):
    """Weight matrices whose elements all have the same non-zero value."""

    value: float

    def message(self) -> str:
        one = len(self.names) == 1
        what = f"{'' if one else 'each of '}{self.described()} has"
        units = "its units start" if one else "in each, the units start"
        return f"{what} every element equal to {self.value:g}: {units} as identical copies and stay so."

    def fix(self) -> str:
        return (
            f"Initialise {self.names[0] if len(self.names) == 1 else 'them'} from a random distribution (e.g. "
            "weight_init=Normal(0.01), 'HeUniform', 'XavierUniform'); keep constant initialisers for biases and "
            "normalisation parameters."
        )


@register(
    "GA602",
    "constant-initialized-weight",
    severity="error",
    needs=(ParameterValues,),
    causes=(ConstantWeights,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A weight matrix whose elements all have the same non-zero value.

    What it does:
        Reads the values of every trainable weight matrix (as GA601 selects them) and reports
        one with at least two elements that are all equal to one non-zero value (all zeros
        are GA601's). The same names as GA601 are exempt. Values are only read.

    Why is this bad:
        Initialisation must break the symmetry between a layer's units: with every weight
        equal, every output unit computes the same function of the input and receives the
        same gradient, so the units stay copies of each other and the layer has the capacity
        of one unit. Typical causes: ``weight_init="ones"`` or ``Constant(0.01)`` meant for
        a bias, or ``initializer(0.1, shape)`` where a distribution was meant.

    Example:
        ```python
        self.fc = nn.Dense(256, 128, weight_init=Constant(0.01))
        ```

    Use instead:
        ```python
        self.fc = nn.Dense(256, 128, weight_init=Normal(0.01))  # random, not constant
        ```
    """
    by_value: dict[float, list[WeightMatrix]] = {}
    for item in weight_matrices(ctx):
        if item.constant is not None and item.constant != 0.0 and item.parameter.size >= 2:
            by_value.setdefault(item.constant, []).append(item)
    # One Constant(c) initialiser shared by a layer factory is one cause, however many layers it built.
    for value, items in by_value.items():
        for group in one_group(ctx, [item.node for item in items]):
            cause = ConstantWeights(**ConstantWeights.facts(group, items), value=float(value))
            yield ctx.finding("error", group.subject, cause, group.nodes, subjects=group.names)
