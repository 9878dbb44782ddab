"""GA633 tie-differs-from-reference."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import listing
from graphaudit.checks._shared.reference import ANOTHER_MODEL
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.reference import ReferenceWeights
from graphaudit.findings import Finding


@register(
    "GA633",
    "tie-differs-from-reference",
    severity="error",
    needs=(ReferenceWeights,),
    once="one finding per tie of the original the port splits, and per parameter of the port the original keeps apart: each tie is declared on its own",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Weights tied in the original and separate in the port, or the reverse.

    What it does:
        Reads which weights the original ties (a ``.pth``/``.bin`` state dict saves a tied
        weight once and names it twice) and which parameters the port shares (one
        ``Parameter`` reached by two attribute paths), and reports a tie that one side has
        and the other does not: original weights tied together paired with two distinct port
        parameters, or one port parameter reached under two names that the original keeps
        apart. A ``.safetensors`` file saves no tie (it leaves tied copies out): GA631 then
        names the weight of the same shape.

    Why is this bad:
        Untied, the two copies start equal and drift apart as they train (an output
        projection no longer the transposed embedding); tied where the original is not,
        two layers are forced to learn one matrix. The article's §3.2 lists weights shared
        by accident, or not shared by accident, among the silent accuracy problems.

    Example:
        ```python
        self.embed = nn.Embedding(100, 16)
        self.head = nn.Dense(16, 100, has_bias=False)     # the original ties head.weight to embed.weight
        ```

    Use instead:
        ```python
        self.head.weight = self.embed.embedding_table     # tied, as the original
        ```
    """
    weights = ctx.need(ReferenceWeights)
    if weights.matched_fraction() < ANOTHER_MODEL:
        return  # GA634: against another model's file, the pairs the order pass finds are chance
    port_of = {pair.reference: pair.port for pair in weights.mapping.pairs}
    for tie in weights.reference_ties:
        ports = sorted({port_of[name] for name in tie if name in port_of})
        if len(ports) > 1:
            yield ctx.finding(
                "error",
                ports[0],
                f"The original ({weights.label}) ties {listing(list(tie))} (one tensor), but the port keeps "
                f"them as separate parameters {listing(ports)}: they will drift apart as they train.",
                f"Tie them in the port: make {ports[1]} the same Parameter as {ports[0]}.",
                tuple(weights.port_nodes[p] for p in ports),
                subjects=tuple(ports),
            )
    tied_in_reference = {name for tie in weights.reference_ties for name in tie}
    names_of: dict[str, list[str]] = {}
    for pair in weights.mapping.pairs:
        names_of.setdefault(pair.port, []).append(pair.reference)
    for path, names in names_of.items():
        apart = [name for name in names if name not in tied_in_reference]
        if len(apart) > 1:
            aliases = weights.port_aliases[path]
            yield ctx.finding(
                "error",
                path,
                f"The port shares one parameter as {listing(list(aliases))}, but the original ({weights.label}) "
                f"keeps {listing(apart)} apart: two layers are forced to learn one matrix.",
                "Give each layer its own Parameter, as the original does.",
                (weights.port_nodes[path],),
                subjects=tuple(aliases),
            )
