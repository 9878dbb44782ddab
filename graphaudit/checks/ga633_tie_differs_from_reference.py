"""GA633 tie-differs-from-reference."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.reference import ANOTHER
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.reference import ReferenceWeights
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing


@dataclass(frozen=True)
class TieSplitInPort(Cause):
    """Weights the original ties (one tensor) that the port keeps as separate parameters."""

    names_subjects = True
    original: str  # the reference's label (its file's name)
    tie: tuple[str, ...]  # the original's names of the one tensor
    ports: tuple[str, ...]  # the port's separate parameters paired with them, sorted

    def message(self) -> str:
        return (
            f"The original ({self.original}) ties {listing(self.tie)} (one tensor), but the port keeps "
            f"them as separate parameters {listing(self.ports)}: they will drift apart as they train."
        )

    def fix(self) -> str:
        return f"Tie them in the port: make {self.ports[1]} the same Parameter as {self.ports[0]}."


@dataclass(frozen=True)
class TieAddedInPort(Cause):
    """One port parameter, reached under several names, paired with weights the original keeps apart."""

    names_subjects = True
    original: str  # the reference's label (its file's name)
    aliases: tuple[str, ...]  # every path the port's parameter is reached by
    apart: tuple[str, ...]  # the original's separate weights it is paired with

    def message(self) -> str:
        return (
            f"The port shares one parameter as {listing(self.aliases)}, but the original ({self.original}) "
            f"keeps {listing(self.apart)} apart: two layers are forced to learn one matrix."
        )

    def fix(self) -> str:
        return "Give each layer its own Parameter, as the original does."


@register(
    "GA633",
    "tie-differs-from-reference",
    severity="error",
    needs=(ReferenceWeights,),
    causes=(TieSplitInPort, TieAddedInPort),
    defers_to={"GA634": ANOTHER},
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
    port_of = {pair.reference: pair.port for pair in weights.mapping.pairs}
    for tie in weights.reference_ties:
        ports = tuple(sorted({port_of[name] for name in tie if name in port_of}))
        if len(ports) > 1:
            cause = TieSplitInPort(weights.label, tuple(tie), ports)
            yield ctx.finding(
                "error", ports[0], cause, tuple(weights.port_nodes[p] for p in ports), subjects=ports
            )
    tied_in_reference = {name for tie in weights.reference_ties for name in tie}
    names_of: dict[str, list[str]] = {}
    for pair in weights.mapping.pairs:
        names_of.setdefault(pair.port, []).append(pair.reference)
    for path, names in names_of.items():
        apart = tuple(name for name in names if name not in tied_in_reference)
        if len(apart) > 1:
            aliases = tuple(weights.port_aliases[path])
            cause = TieAddedInPort(weights.label, aliases, apart)
            yield ctx.finding("error", path, cause, (weights.port_nodes[path],), subjects=aliases)
