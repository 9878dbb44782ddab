"""Chains of weight layers joined by saturating activations (shared by GA309 and its probe confirmation GA310).

A *saturating link* is a sigmoid or tanh (:data:`~graphaudit.checks._shared.activations.SATURATING`)
that takes the output of one weight layer and feeds another, through shape glue and poolings
only (see :mod:`~graphaudit.checks._shared.layers`; a max or average pooling rescales nothing,
so a conv trunk ``conv → sigmoid → pool → conv`` saturates as a dense stack does): ``Dense → Sigmoid → Dense``, the ``activation`` of
``nn.Dense(..., activation="tanh")`` included. A normalisation, a residual addition or a
gating product between them breaks the link: they are exactly what keeps a deep stack of
saturating units trainable. :func:`saturating_chains` returns the longest runs of links.

Example:
    >>> import graphaudit, numpy as np
    >>> from mindspore import nn, Tensor
    >>> cells = [nn.Dense(8, 8, activation="sigmoid") for _ in range(5)] + [nn.Dense(8, 2)]
    >>> graph = graphaudit.to_networkx(nn.SequentialCell(cells), inputs=Tensor(np.ones((2, 8), np.float32)))
    >>> [len(chain.activations) for chain in chains_of(graph, lambda node: None)]
    [5]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphaudit import graph as g
from graphaudit.checks._shared.activations import SATURATING, activation_name
from graphaudit.checks._shared.layers import (
    Layer,
    consumers,
    enclosing_call,
    producer,
    weight_layers,
    weight_layers_of,
)
from graphaudit.checks._shared.trunk import is_pooling

if TYPE_CHECKING:
    import networkx as nx

    from graphaudit.checks.context import AuditContext

__all__ = ["DEPTH", "Chain", "chains_of", "saturating_chains"]

#: Saturating hidden activations in a row from which a stack is deep enough to stall (GA309, GA310).
DEPTH = 4


@dataclass(frozen=True)
class Chain:
    """Weight layers ``layers[i] → activations[i] → layers[i + 1]``, in data-flow order."""

    layers: tuple[Layer, ...]
    activations: tuple[str, ...]  # the activation nodes
    names: tuple[str, ...]  # "sigmoid" / "tanh", one per activation

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(layer.path for layer in self.layers)


def _links(graph: nx.MultiDiGraph, layers: dict[str, Layer]) -> dict[str, list[tuple[str, str, str]]]:
    links: dict[str, list[tuple[str, str, str]]] = {}
    for node, attrs in graph.nodes(data=True):
        if attrs["kind"] not in (g.CALL, g.OP):
            continue
        name = activation_name(graph, node)
        if name not in SATURATING:
            continue
        source = producer(graph, node, through=lambda n: is_pooling(graph, n))
        if source is None or graph.nodes[source]["kind"] not in (g.CALL, g.OP):
            continue
        first = source if source in layers else enclosing_call(graph, source)
        if first not in layers or (source not in layers and enclosing_call(graph, node) != first):
            continue  # only a layer's own output (or its own activation), not an op computed inside it
        for target in consumers(graph, node, layers, through=lambda n: is_pooling(graph, n)):
            if target in layers and target != first:
                links.setdefault(first, []).append((target, node, name))
    return links


def chains_of(
    graph: nx.MultiDiGraph, cell_of: Callable[[str], Any], layers: Iterable[Layer] | None = None
) -> list[Chain]:
    """The maximal chains of saturating links of *graph*, longest first.

    *layers*: the graph's weight layers when the caller has them (else found here).
    """
    ordered = weight_layers_of(graph, cell_of) if layers is None else list(layers)
    layers = {layer.call: layer for layer in ordered}
    rank = {layer.call: index for index, layer in enumerate(ordered)}
    links = {
        source: [link for link in found if rank[link[0]] > rank[source]]
        for source, found in _links(graph, layers).items()
    }
    # best[call] = (links in the longest chain ending at call, previous call, activation, name)
    best: dict[str, tuple[int, str | None, str, str]] = {layer.call: (0, None, "", "") for layer in ordered}
    for layer in ordered:
        length = best[layer.call][0]
        for target, act, name in links.get(layer.call, ()):
            if best[target][0] < length + 1:
                best[target] = (length + 1, layer.call, act, name)
    chains = []
    for call, (length, _, _, _) in best.items():
        if length == 0 or links.get(call):
            continue  # no chain ends here, or it goes on
        path, acts, names, current = [layers[call]], [], [], call
        while best[current][1] is not None:
            _, previous, act, name = best[current]
            assert previous is not None
            path.append(layers[previous])
            acts.append(act)
            names.append(name)
            current = previous
        chains.append(Chain(tuple(reversed(path)), tuple(reversed(acts)), tuple(reversed(names))))
    chains.sort(key=lambda chain: -len(chain.activations))
    kept: list[Chain] = []
    for chain in chains:
        if not any(set(chain.activations) <= set(other.activations) for other in kept):
            kept.append(chain)
    return kept


def _chains(ctx: AuditContext) -> list[Chain]:
    cells = ctx.structure.cells
    return chains_of(
        ctx.graph, lambda node: cells.get(node), weight_layers(ctx)
    )  # shared with the other design rules


def saturating_chains(ctx: AuditContext) -> list[Chain]:
    """The saturating chains of the audit's traced pass (computed once per audit)."""
    return ctx.shared(_chains)
