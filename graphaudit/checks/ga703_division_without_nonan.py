"""GA703 division-without-nonan."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import networkx as nx

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted

# op_type of the traced divisions (``x / y``, ``x /= y``, ``1 / y``, ``ops.div``, ``ops.divide``,
# ``ops.true_divide``, ``Tensor.div``, ``ops.RealDiv()``...); DivNoNan, floor and
# integer divisions are not among them.
DIVISIONS = frozenset({"div", "divide", "truediv", "truedivide", "realdiv", "tensordiv", "augassigndiv"})
# The sign a traced value is known to have, from the operations that produce it: strictly
# positive (never zero), non-negative (zero possible: a count, a sum of squares, a norm), or
# nothing known (a difference, data). A divisor is safe when it is strictly positive.
POSITIVE, NONNEGATIVE, UNKNOWN = 2, 1, 0
# Strictly positive whatever their input: exp(y), softplus, sigmoid, softmax, ones.
ALWAYS_POSITIVE = frozenset({"exp", "softplus", "sigmoid", "softmax", "oneslike", "ones"})
# Non-negative whatever their input, strictly positive on a strictly positive input.
NONNEGATIVE_OF = frozenset({"abs", "square", "norm", "sqrt", "relu", "linalgvectornorm", "vectornorm"})
ALWAYS_ZERO = frozenset({"zeroslike", "zeros"})
# A tensor and a constant (``y + eps``, ``clamp(y, min=eps)``, ``maximum(y, eps)``): the
# user's own guard, trusted.
GUARDS = frozenset({"add", "clamp", "clip", "clipbyvalue", "clampmin", "maximum"})
# Sums and means keep the sign of what they add up, a power that of a positive base; the rest
# only moves values around.
REDUCTIONS = frozenset({"sum", "reducesum", "mean", "reducemean", "cumsum"})
TRANSPARENT = frozenset(
    {
        "reshape", "view", "expanddims", "unsqueeze", "squeeze", "broadcastto", "expand", "expandas", "tile",
        "transpose", "permute", "cast", "astype", "float", "to", "getitem", "contiguous", "repeat", "concat",
        "cat", "stack", "pow",
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


def _combined(op_type: str, inputs: list[int]) -> int:
    lowest, highest = min(inputs, default=UNKNOWN), max(inputs, default=UNKNOWN)
    if op_type in ALWAYS_POSITIVE:
        return POSITIVE
    if op_type in ALWAYS_ZERO:
        return NONNEGATIVE
    if op_type in NONNEGATIVE_OF:
        return POSITIVE if inputs and lowest == POSITIVE else NONNEGATIVE
    if op_type in GUARDS and len(inputs) <= 1:
        return POSITIVE
    if op_type == "maximum":
        return highest
    if op_type == "add":  # a positive plus a non-negative is positive
        return POSITIVE if highest == POSITIVE and lowest >= NONNEGATIVE else min(lowest, NONNEGATIVE)
    if op_type in ("mul", "div", "realdiv", "truediv", "minimum") or op_type in REDUCTIONS | TRANSPARENT:
        return lowest if inputs else UNKNOWN
    return UNKNOWN


def sign(graph: nx.MultiDiGraph, node: str, known: dict[str, int] | None = None) -> int:
    """What is known of the sign of *node*'s value: :data:`POSITIVE`, :data:`NONNEGATIVE` or :data:`UNKNOWN`.

    Read from the traced operations that produce it: ``e1 * den + e2``, with ``e1`` and ``e2``
    exponentials and ``den`` a running sum of them (RWKV's attention), is strictly positive;
    ``mask.sum()``, ``x.norm()``, a variance are non-negative and may be zero; a difference
    ``a - b``, a network input or a cell's output may be anything.
    """
    known = {} if known is None else known
    expanded: set[str] = set()
    stack = [node]
    while stack:  # the producers first, without recursion (long recurrences are deep)
        current = stack.pop()
        if current in known:
            continue
        if graph.nodes[current]["kind"] != g.OP:
            known[current] = UNKNOWN
            continue
        pending = [s for s, _ in _flows_into(graph, current) if s not in known]
        if pending and current not in expanded:
            expanded.add(current)
            stack.append(current)
            stack.extend(pending)
            continue
        inputs = [known.get(s, UNKNOWN) for s, _ in _flows_into(graph, current)]
        known[current] = _combined(graph.nodes[current]["op_type"], inputs)
    return known[node]


def guarded(graph: nx.MultiDiGraph, node: str, known: dict[str, int] | None = None) -> bool:
    """Whether a divisor cannot be zero: strictly positive by the operations that make it (:func:`sign`)."""
    return sign(graph, node, known) == POSITIVE


_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


def _input_words(attrs: dict) -> str:
    index = attrs.get("index")
    if isinstance(index, int) and 0 <= index < len(_ORDINALS):
        return f"the network's {_ORDINALS[index]} input"
    return f"network input {index if index is not None else '?'}"


def why_zero(graph: nx.MultiDiGraph, node: str, known: dict[str, int]) -> str:
    """What is known of the divisor that lets it be zero, as a word of :data:`ZERO_BECAUSE`."""
    attrs = graph.nodes[node]
    if attrs["kind"] == g.INPUT:
        return "data"
    if attrs["kind"] != g.OP:
        return "cell"
    if attrs["op_type"] in ("sub", "neg"):
        return "difference"
    if sign(graph, node, known) == NONNEGATIVE:
        return "non-negative"
    if attrs["op_type"] in REDUCTIONS:
        return "reduction"
    return "unknown"


#: Why a divisor can be zero, in words, by what :func:`why_zero` says of it.
ZERO_BECAUSE = {
    "data": "data, which can hold zeros",
    "cell": "a cell's output, which nothing keeps away from zero",
    "difference": "a difference: zero where its two sides are equal",
    "non-negative": "non-negative (a count, a sum of squares, a variance, a norm): zero on an all-zero input",
    "reduction": "a {op_type} of values not known to be non-zero: zero where they all are (a row that is all "
    "padding, an empty mask) or where they cancel",
    "unknown": "not known to be non-zero: nothing among the operations that make it (an epsilon, a clamp, an "
    "exponential) keeps it from 0",
}


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


def describe(graph: nx.MultiDiGraph, node: str, scope: str | None = None) -> str:
    """The divisor in words: the operation that makes it (and where, when not in *scope*), a cell, an input."""
    attrs = graph.nodes[node]
    if attrs["kind"] == g.OP:
        where = "" if attrs["scope"] == scope else f" in {attrs['scope'] or 'the network itself'}"
        sources = _flows_into(graph, node)
        summed = ""
        if attrs["op_type"] in REDUCTIONS and sources and graph.nodes[sources[0][0]]["kind"] == g.INPUT:
            summed = f" of {_input_words(graph.nodes[sources[0][0]])}"
        return f"{attrs['op']}{summed}{where}"
    if attrs["kind"] == g.CALL:
        return f"the output of {attrs['path'] or 'the network itself'} ({attrs['class_name']})"
    return _input_words(attrs)


@dataclass(frozen=True)
class DivisionWithoutNoNan(Cause):
    """A division by a tensor the network computes, which nothing keeps from zero (one line of code, in its cells)."""

    cells: tuple[str, ...]  # the cells whose construct divides, by path ((root): the network itself)
    scope: str  # the first of them as the trace names it ("" for the network itself)
    cell_class: str  # its class
    divisions: int  # how many traced divisions, in all those cells and calls
    op: str  # the division's operation, as traced
    divisor: str  # what the divisor is, in words (the operation that makes it, a cell's output, an input)
    zero: str  # why it can be zero: a key of ZERO_BECAUSE
    reduction: str = ""  # the reduction that makes it, when that is why

    def message(self) -> str:
        if self.scope:
            cell = f"{self.scope} ({self.cell_class})"
        else:
            cell = f"The network's own construct ({self.cell_class or 'the root cell'})"
        where = (
            cell
            if len(self.cells) == 1
            else f"{cell} and {counted(len(self.cells) - 1, 'other cell')} of its class"
        )
        times = f" ({self.divisions} divisions)" if self.divisions > 1 else ""
        return (
            f"{where} divides by a tensor it computes{times}: {self.op} by {self.divisor}, "
            f"{ZERO_BECAUSE[self.zero].format(op_type=self.reduction)}. Nothing guards the divisor, so where it is "
            "zero the result is inf or nan."
        )

    def fix(self) -> str:
        return (
            "Use ops.DivNoNan() (0 where the divisor is 0) or guard the divisor (+ eps, ops.clamp(min=eps))."
        )


@register(
    "GA703", "division-without-nonan", severity="warning", needs=(TracedPass,), causes=(DivisionWithoutNoNan,)
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A division by a tensor the network computes, which can be zero.

    What it does:
        In the traced forward pass, finds every division (``x / y``, ``ops.div``,
        ``ops.divide``, ``ops.RealDiv``...) whose divisor is a tensor computed from the
        network's inputs or parameters, and reports it unless the operations that make the
        divisor keep it strictly positive: a guard (``y + eps``, ``clamp(y, min=eps)``), an
        exponential, a sigmoid or softmax, and sums, products and square roots of those
        (RWKV's ``e1 * den + e2`` over exponentials). A difference, a count or a sum of a mask,
        a variance, a norm without epsilon, or data can be zero: those are reported. The same
        division in every block of a stack (or every step of a loop) is one finding, listing
        the cells. Divisions by a Python number or a constant tensor (ViT's attention scaling) are
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
    known: dict[str, int] = {}
    causes: dict[tuple[str, str, str], list[tuple[str, str, str]]] = {}
    for node, attrs in g.nodes_of_kind(ctx.graph, g.OP):
        if attrs["op_type"] not in DIVISIONS:
            continue
        divisor = divisor_of(ctx.graph, node)
        if divisor is None or guarded(ctx.graph, divisor, known) or not depends_on_data(ctx.graph, divisor):
            continue
        scope = attrs["scope"] or "(root)"
        # One cause, one finding: the same division in every block of a stack, or at every
        # step of a loop, is one line of code.
        key = (_cell_class(ctx, attrs["scope"]), attrs["op"], _kind_of(ctx.graph, divisor))
        causes.setdefault(key, []).append((scope, node, divisor))
    for (_, op, _), sites in causes.items():
        scopes = tuple(dict.fromkeys(scope for scope, _, _ in sites))
        scope, node, divisor = sites[0]
        inside = ctx.graph.nodes[node]["scope"]
        zero = why_zero(ctx.graph, divisor, known)
        cause = DivisionWithoutNoNan(
            scopes,
            inside,
            _cell_class(ctx, inside),
            len(sites),
            op,
            describe(ctx.graph, divisor, inside),
            zero,
            ctx.graph.nodes[divisor]["op_type"] if zero == "reduction" else "",
        )
        nodes = [n for _, division, d in sites[:8] for n in (division, d)]
        yield ctx.finding("warning", scope, cause, nodes, subjects=scopes)


def _cell_class(ctx: AuditContext, scope: str) -> str:
    return str(ctx.graph.nodes.get(f"cell:{scope}", {}).get("class_name", scope))


def _kind_of(graph: nx.MultiDiGraph, node: str) -> str:
    attrs = graph.nodes[node]
    return str(attrs.get("op_type") or attrs.get("class_name") or attrs["kind"])
