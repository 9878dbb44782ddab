"""GA342 positions-ignored."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.dependency import MIXING, subject_and_nodes, where
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dependency import DependencyProbe, SequenceDependencies
from graphaudit.findings import Cause, Finding


@dataclass(frozen=True)
class PositionsIgnored(Cause):
    """The first cell that mixes a sequence's positions does not see their order."""

    entry: str  # that cell ("(root)": the network)
    tokens: str  # the tokens reordered, in words (the probe's: "the tokens of decoder_input_ids")
    cut: int  # the tokens before this position were reordered
    tolerance: float  # the bound (relative) within which the later positions' output stayed
    effect: float  # how far the reordered positions' output moved (relative)

    def message(self) -> str:
        cell = where(self.entry, "the network")
        return (
            f"{cell[0].upper()}{cell[1:]} is the first cell that mixes the positions of a sequence, but it does not "
            f"see their order: reordering {self.tokens} before position {self.cut} leaves its output at the later "
            f"positions as it was (within {self.tolerance:.2g} of its largest value), while the reordered positions "
            f"move by {self.effect:.0%}. The positional information (position embeddings, rotary angles, position "
            "ids) does not reach it."
        )

    def fix(self) -> str:
        return (
            "Check that the position embedding is added to the token embedding (or the rotary embedding applied to "
            f"the queries and keys) before {where(self.entry, 'the network')}, and that position ids are passed "
            "down. If the model has no positional information on purpose (NoPE), ignore this warning."
        )


@register(
    "GA342",
    "positions-ignored",
    severity="warning",
    needs=(
        SequenceDependencies,
        DependencyProbe,
    ),
    causes=(PositionsIgnored,),
    defers_to={"GA340": MIXING},
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """The first layer that mixes a sequence's positions does not see their order.

    What it does:
        For a causal model, reorders the tokens before the middle of one sequence (in
        inference mode) and finds the first cell whose output at the later positions moves;
        a change to the tokens after the middle finds the first cell that mixes positions.
        When the first cell that mixes positions does not see the reordering (it is a bag of
        words: permuting its inputs permutes its outputs), the positional information never
        reached it, and the finding names it.

    Why is this bad:
        Rotary embeddings applied to the wrong dimensions, position ids never passed, a
        learned position table never read: the first attention layer sees a bag of words.
        A causal model then learns order only from its mask, one layer late, and a
        bidirectional one not at all. Nothing raises; the model is just worse. A warning:
        a few models are built without positional information on purpose (NoPE).

    Example:
        ```python
        def construct(self, ids):
            x = self.tokens(ids)
            p = self.positions(ops.arange(ids.shape[1]))    # computed, never added
            for block in self.blocks:
                x = block(x)
        ```

    Use instead:
        ```python
        def construct(self, ids):
            x = self.tokens(ids) + self.positions(ops.arange(ids.shape[1]))[None]
            for block in self.blocks:
                x = block(x)
        ```
    """
    sequence = ctx.need(SequenceDependencies)
    dependence = sequence.positions
    if dependence is None or not dependence.found:
        return
    subject, nodes = subject_and_nodes(dependence)
    probe = ctx.need(DependencyProbe)
    cause = PositionsIgnored(
        subject,
        probe.tokens,
        int(probe.result.cut),
        float(dependence.tolerance),
        float(dependence.effect),
    )
    yield ctx.finding("warning", subject, cause, nodes)
