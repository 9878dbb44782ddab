"""GA703 division-without-nonan."""

from __future__ import annotations

from collections.abc import Iterator

import networkx as nx

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Finding

# op_type of the traced divisions (``x / y``, ``x /= y``, ``1 / y``, ``ops.div``, ``ops.divide``,
# ``ops.true_divide``, ``Tensor.div``, ``ops.RealDiv()``...); DivNoNan, floor and
# integer divisions are not among them.
DIVISIONS = frozenset({"div", "divide", "truediv", "truedivide", "realdiv", "tensordiv", "augassigndiv"})
# Operations whose result cannot be zero when fed a tensor and a constant: ``y + eps``,
# ``clamp(y, min=eps)``, ``exp(y)``...
GUARDS = frozenset(
    {"add", "clamp", "clip", "clipbyvalue", "clampmin", "maximum", "exp", "softplus", "sigmoid"}
)
# Operations that keep a divisor's zeros where they are: look through them for a guard.
TRANSPARENT = frozenset(
    {
        "sum", "reducesum", "mean", "reducemean", "sqrt", "square", "pow", "abs", "norm", "reshape",
        "view", "expanddims", "unsqueeze", "squeeze", "broadcastto", "expand", "expandas", "tile",
        "transpose", "cast", "astype", "float", "to", "getitem",
    }
)  # fmt: skip


def _flows_into(graph: nx.MultiDiGraph, node: str) -> list[tuple[str, int]]:
    return [(s, d["dst_slot"]) for s, _, d in graph.in_edges(node, data=True) if d["kind"] == g.FLOWS]


def divisor_of(graph: nx.MultiDiGraph, node: str) -> str | None:
    """The node producing the divisor of a traced division, when it is a traced tensor.

    Slots count tensor arguments only: for ``x / y`` the divisor is slot 1, for the
    reflected ``2 / y`` (``Tensor.__rtruediv__``) it is slot 0. A divisor with no producer
    (a Python number, a constant tensor made in ``construct``) gives None.
    """
    reflected = "__r" in graph.nodes[node].get("op", "")
    wanted = 0 if reflected else 1
    return next((source for source, slot in _flows_into(graph, node) if slot == wanted), None)


def guarded(graph: nx.MultiDiGraph, node: str, depth: int = 0) -> bool:
    """Whether a divisor is ``y + eps``, ``clamp(y, min=eps)``... possibly through a reduction."""
    attrs = graph.nodes[node]
    if attrs["kind"] != g.OP or depth > 8:
        return False
    op_type = attrs["op_type"]
    inputs = _flows_into(graph, node)
    if op_type in GUARDS:
        return len(inputs) <= 1 or op_type in {"exp", "softplus", "sigmoid"}
    if op_type in TRANSPARENT and inputs:
        return all(guarded(graph, source, depth + 1) for source, _ in inputs)
    return False


def depends_on_data(graph: nx.MultiDiGraph, node: str) -> bool:
    """Whether a node's value comes from the network's inputs or parameters (not only constants)."""
    frontier, seen = [node], {node}
    while frontier:
        current = frontier.pop()
        kind = graph.nodes[current]["kind"]
        if kind in (g.INPUT, g.CALL):
            return True
        for source, _, d in graph.in_edges(current, data=True):
            if d["kind"] == g.READS:
                return True
            if d["kind"] == g.FLOWS and source not in seen:
                seen.add(source)
                frontier.append(source)
    return False


def describe(graph: nx.MultiDiGraph, node: str) -> str:
    attrs = graph.nodes[node]
    if attrs["kind"] == g.OP:
        return f"{attrs['op']} in {attrs['scope'] or '(root)'}"
    if attrs["kind"] == g.CALL:
        return f"the output of {attrs['path'] or '(root)'} ({attrs['class_name']})"
    return f"network input {attrs.get('index', '?')}"


@register("GA703", "division-without-nonan", severity="warning", needs=(TracedPass,))
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A division by a tensor the network computes, which can be zero.

    What it does:
        In the traced forward pass, finds every division (``x / y``, ``ops.div``,
        ``ops.divide``, ``ops.RealDiv``...) whose divisor is a tensor computed from the
        network's inputs or parameters, and reports it unless the divisor is visibly guarded
        (``y + eps``, ``clamp(y, min=eps)``, ``exp(y)``, possibly through a sum or a square
        root). Divisions by a Python number or a constant tensor (ViT's attention scaling) are
        ignored, and so are divisions inside a leaf cell (not traced). The subject is the
        path of the cell whose ``construct`` divides (``(root)`` for the network itself).

    Why is this bad:
        A divisor computed from data is zero sooner or later (an empty mask, a zero norm, a
        batch with no positive sample): ``ops.div`` then returns ``inf`` or ``nan``
        (``[1, 0] / [0, 0]`` gives ``[inf, nan]`` on MindSpore 2.10), which spreads through the
        loss into every weight. MindSpore's accuracy-tuning guide names this misuse: where
        the divisor may be zero, ``ops.DivNoNan`` (which returns 0 there) is meant.

    Example:
        ```python
        def construct(self, x, mask):
            return (self.fc(x) * mask).sum(axis=1) / mask.sum(axis=1)
        ```

    Use instead:
        ```python
        def construct(self, x, mask):
            return self.div_no_nan((self.fc(x) * mask).sum(axis=1), mask.sum(axis=1))  # ops.DivNoNan()
        ```

        or guard the divisor: ``... / (mask.sum(axis=1) + 1e-6)``, ``ops.clamp(..., min=1)``.
    """
    for node, attrs in g.nodes_of_kind(ctx.graph, g.OP):
        if attrs["op_type"] not in DIVISIONS:
            continue
        divisor = divisor_of(ctx.graph, node)
        if divisor is None or guarded(ctx.graph, divisor) or not depends_on_data(ctx.graph, divisor):
            continue
        scope = attrs["scope"] or "(root)"
        yield ctx.finding(
            "warning",
            scope,
            f"{scope} divides by a tensor the network computes ({attrs['op']} by {describe(ctx.graph, divisor)}) "
            "with no guard: where the divisor is zero the result is inf or nan.",
            "Use ops.DivNoNan() (0 where the divisor is 0) or guard the divisor (+ eps, ops.clamp(min=eps)).",
            [node, divisor],
        )
