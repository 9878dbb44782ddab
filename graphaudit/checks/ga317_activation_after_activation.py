"""GA317 activation-after-activation."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.activations import ELEMENTWISE, OUTPUT_RANGE, activation_name
from graphaudit.checks._shared.layers import consumers, enclosing_call
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Facts, Finding
from graphaudit.text import LIMIT, listing

#: Activations that are the identity on a non-negative input.
_IDENTITY_ON_POSITIVE = frozenset({"relu"})


def _identity(first: str, second: str) -> bool:
    """The second activation returns the first's output unchanged (``relu(relu(x))``, a ReLU after a sigmoid)."""
    low = OUTPUT_RANGE.get(first, (None, None))[0]
    return second in _IDENTITY_ON_POSITIVE and low is not None and low >= 0


def _where(ctx: AuditContext, node: str) -> str:
    """The cell path of a call, or of the cell whose construct ran an operation."""
    attrs = ctx.graph.nodes[node]
    if attrs["kind"] == g.CALL:
        return attrs.get("path") or type(ctx.net).__name__
    parent = enclosing_call(ctx.graph, node)
    return (ctx.graph.nodes[parent].get("path") if parent else "") or type(ctx.net).__name__


@dataclass(frozen=True)
class ActivationPair(Facts):
    """One activation applied to the output of another (a part of :class:`ActivationAfterActivation`)."""

    first: str  # the first activation's name ("relu")
    first_at: str  # the cell that applies it (or whose construct does)
    second: str
    second_at: str
    identity: bool  # the second is the identity on what the first outputs

    def message(self) -> str:
        note = " (the identity there)" if self.identity else ""
        return f"{self.first} at '{self.first_at}' then {self.second} at '{self.second_at}'{note}"


@dataclass(frozen=True)
class ActivationAfterActivation(Cause):
    """Element-wise activations applied straight to the output of another."""

    pairs: tuple[ActivationPair, ...]

    @property
    def names_subjects(self) -> bool:  # type: ignore[override]
        """Whether the pairs shown name the first 4 subjects (the cells of the second activations)."""
        shown = {at for pair in self.pairs[:LIMIT] for at in (pair.first_at, pair.second_at)}
        return set(list(dict.fromkeys(pair.second_at for pair in self.pairs))[:LIMIT]) <= shown

    def message(self) -> str:
        shown = listing((pair.message() for pair in self.pairs), separator="; ")
        return f"An activation is applied to the output of another: {shown}."

    def fix(self) -> str:
        return (
            "Keep one activation per layer: remove the second (a Dense(activation=...) or a block that already ends "
            "in its activation needs no extra nn.ReLU)."
        )


@register(
    "GA317",
    "activation-after-activation",
    severity="warning",
    also=("info",),
    needs=(TracedPass,),
    once="one finding per network: every activation applied after another is listed in it",
    causes=(ActivationAfterActivation,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """An element-wise activation applied straight to the output of another (``relu(relu(x))``, ``ReLU → Sigmoid``).

    What it does:
        Finds, in the traced pass, an element-wise activation (``nn.ReLU``, ``nn.Tanh``,
        ``ops.sigmoid``...) whose only reader, through shape operations, is another
        element-wise activation. One finding per network, listing every such pair: a warning
        when the second of some pair is the identity on what the first outputs (a ReLU after a
        ReLU, a ReLU6, a sigmoid: the layer was meant to do something and does nothing), info
        for the other pairs (a sigmoid after a ReLU, a tanh after a GELU).

    Why is this bad:
        The second activation adds no capacity: ``relu(relu(x))`` is ``relu(x)``, a ReLU
        after a sigmoid does nothing, and a sigmoid after a ReLU squeezes every value into
        ``[0.5, 1)``. It is most often a port from Keras in which ``Dense(..., activation=
        "relu")`` was followed by an explicit ``ReLU`` layer too, or an activation added to a
        block that already ends in one. Nobody writes ``relu(relu(x))`` on purpose: the
        second ReLU is a mistake even though it computes nothing, which is why the pairs whose
        second activation is the identity are warnings; the other pairs change the values and
        are sometimes meant (info). NeuraLint (TOSEM'21) lists redundant layers among its
        design-inefficiency rules, and Theia (arXiv:2412.05775) reports a ReLU applied twice.

    Example:
        ```python
        nn.SequentialCell([nn.Dense(20, 64, activation="relu"), nn.ReLU(), nn.Dense(64, 10)])
        ```

    Use instead:
        ```python
        nn.SequentialCell([nn.Dense(20, 64, activation="relu"), nn.Dense(64, 10)])
        ```
    """
    graph = ctx.graph
    pairs: list[tuple[str, str, str, str]] = []
    for node, attrs in sorted(graph.nodes(data=True), key=lambda item: item[1].get("order", 0)):
        if attrs["kind"] not in (g.CALL, g.OP):
            continue
        first = activation_name(graph, node)
        if first not in ELEMENTWISE or first == "exp":
            continue
        readers = consumers(graph, node)
        if len(readers) != 1 or graph.nodes[readers[0]]["kind"] not in (g.CALL, g.OP):
            continue
        second = activation_name(graph, readers[0])
        if second not in ELEMENTWISE or second == "exp":
            continue
        pairs.append((node, readers[0], first, second))
    if not pairs:
        return
    cause = ActivationAfterActivation(
        tuple(
            ActivationPair(first, _where(ctx, node), second, _where(ctx, reader), _identity(first, second))
            for node, reader, first, second in pairs
        )
    )
    # A second activation that is the identity on the first's output can only be a slip.
    severity = "warning" if any(pair.identity for pair in cause.pairs) else "info"
    yield ctx.finding(
        severity,
        _where(ctx, pairs[0][1]),
        cause,
        [n for pair in pairs for n in pair[:2]],
        subjects=tuple(dict.fromkeys(pair.second_at for pair in cause.pairs)),
    )
