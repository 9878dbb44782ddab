"""GA601 zero-initialized-weight."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import one_group
from graphaudit.checks._shared.weights import WeightMatrices, weight_matrices
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.values import ParameterValues
from graphaudit.findings import Finding
from graphaudit.text import pronouns


@dataclass(frozen=True)
class ZeroWeights(WeightMatrices):
    """Weight matrices whose values are all zero."""

    def message(self) -> str:
        they = pronouns(len(self.names))
        return (
            f"{self.described()} {they.be} all zeros: no gradient reaches the layers before "
            f"{they.object} and {they.possessive} units start identical."
        )

    def fix(self) -> str:
        return (
            f"Initialise {self.names[0] if len(self.names) == 1 else 'them'} randomly (e.g. weight_init='HeUniform' "
            "or 'XavierUniform', or the layer's default) instead of zeros."
        )


@register(
    "GA601",
    "zero-initialized-weight",
    severity="error",
    needs=(ParameterValues,),
    causes=(ZeroWeights,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A weight matrix whose values are all zero.

    What it does:
        Reads the values of every trainable weight matrix (a parameter with two or more
        dimensions named ``weight``/``embedding_table``..., or held by a Dense, Conv,
        Embedding or Linear-like cell) and reports one that is entirely zero. Biases,
        normalisation parameters, layer-scale gammas (1-D) and zero-initialised class
        tokens or position embeddings (names with ``cls_token``, ``pos_embed``,
        ``position``...) are never reported. Values are only read.

    Why is this bad:
        With an all-zero weight a layer's output does not depend on its input and no
        gradient flows back through it to the layers before it; every unit of the layer gets
        the same update, so the symmetry between them is never broken properly. Training
        starts from a degenerate point, slowly or not at all (MindSpore's accuracy-tuning
        guide lists "weights initialised to all zeros" among the common initialisation bugs).

    Example:
        ```python
        self.fc = nn.Dense(256, 128, weight_init="zeros")
        ```

    Use instead:
        ```python
        self.fc = nn.Dense(256, 128)  # or weight_init=HeUniform(), XavierUniform()...
        ```
    """
    zeros = [item for item in weight_matrices(ctx) if item.constant == 0.0]
    # One weight_init="zeros" in a layer factory zeroes every layer it builds: one cause.
    for group in one_group(ctx, [item.node for item in zeros]):
        cause = ZeroWeights(**ZeroWeights.facts(group, zeros))
        yield ctx.finding("error", group.subject, cause, group.nodes, subjects=group.names)
