"""Which cells feed which: data-flow connections between cells of a traced graph.

A *connection* from cell path A to cell path B is a tensor produced inside A that is
consumed inside B, either directly or through *functional glue* only: operations (``x + y``,
``ops.cat``, ``reshape``...) and pass-through container calls that lie inside none of the
cell paths considered. A leaf cell call that lies inside none of them (a ``Dense`` that is
not listed) is real computation, so it breaks the chain: ``conv1`` is not connected to
``relu`` through ``bn1``.

Where a node lies:

- a ``call`` node lies at its ``path``; a cell held under several paths (one embedding
  of two towers) lies at the path inside its caller, where it ran (:mod:`graphaudit.graph`
  records the call under the first path);
- an ``op`` node lies at its ``scope``;
- a node made by a cell outside the network tree (``path`` / ``scope`` like ``<Dense>``)
  lies where the nearest enclosing registered call lies;
- ``input`` / ``output`` nodes lie in no cell.

Node *n* is inside cell path P when its location is P or starts with ``P + "."``; the root
path ``""`` holds every call and op node. Connections need a traced forward pass (a graph
captured with ``inputs``); on a structure-only graph there are none.

Example:
    >>> import graphaudit, numpy as np
    >>> from mindspore import nn, Tensor
    >>> net = nn.SequentialCell([nn.Dense(4, 8), nn.ReLU(), nn.Dense(8, 2)])
    >>> g = graphaudit.to_networkx(net, inputs=Tensor(np.ones((1, 4), np.float32)))
    >>> sorted(direct_connections(g, resolve(g, "?")))
    [('0', '1'), ('1', '2')]
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterable
from fnmatch import fnmatchcase

import networkx as nx

from graphaudit import graph as g
from graphaudit.suggest import close_matches

__all__ = ["close_paths", "connected", "direct_connections", "inside", "location", "resolve"]

_GLOB = re.compile(r"[*?\[]")


def _is_unregistered(path: str) -> bool:
    return path.startswith("<")


def location(graph: nx.MultiDiGraph, node: str) -> str | None:
    """The cell path where a ``call`` or ``op`` node lies; ``None`` for any other node.

    Example:
        >>> import graphaudit, numpy as np
        >>> from mindspore import nn, Tensor
        >>> net = nn.SequentialCell([nn.Dense(4, 2)])
        >>> g = graphaudit.to_networkx(net, inputs=Tensor(np.ones((1, 4), np.float32)))
        >>> location(g, "call:0#1"), location(g, "input:0")
        ('0', None)
    """
    attrs = graph.nodes[node]
    kind = attrs.get("kind")
    if kind == g.CALL:
        path = _called_as(graph, node, attrs)
    elif kind == g.OP:
        path = attrs["scope"]
    else:
        return None
    seen = {node}
    while _is_unregistered(path):
        parents = [s for s, _, d in graph.in_edges(node, data=True) if d["kind"] == g.ENCLOSES]
        if not parents or parents[0] in seen:
            return ""
        node = parents[0]
        seen.add(node)
        path = graph.nodes[node]["path"]
    return path


def _called_as(graph: nx.MultiDiGraph, node: str, attrs: dict) -> str:
    """The path under which a call ran: for a cell held under several paths, the one inside its caller.

    One embedding held by two towers (``q.embed`` and ``d.embed``) is recorded under its first
    path; called by ``d`` it ran as ``d.embed``, and its output is ``d``'s: a cell (or a
    parameter) the towers share is not a tensor flowing from one tower into the other.
    """
    path = attrs["path"]
    cell = graph.nodes.get(attrs.get("cell", ""), {})
    try:
        aliases = json.loads(cell.get("paths", "[]"))
    except (TypeError, ValueError):
        return path
    if len(aliases) < 2:
        return path
    callers = [s for s, _, d in graph.in_edges(node, data=True) if d["kind"] == g.ENCLOSES]
    caller = location(graph, callers[0]) if callers else None
    if caller is None or _within(path, caller):
        return path
    inside_caller = [a for a in aliases if _within(a, caller) and a != caller]
    return min(inside_caller, key=lambda a: a.count(".")) if inside_caller else path


def _within(location: str, path: str) -> bool:
    return path == "" or location == path or location.startswith(path + ".")


def inside(graph: nx.MultiDiGraph, node: str, path: str) -> bool:
    """Whether a ``call`` or ``op`` node lies inside cell *path* (``""``: the whole network).

    Example:
        >>> import graphaudit, numpy as np
        >>> from mindspore import nn, Tensor
        >>> net = nn.SequentialCell([nn.SequentialCell([nn.Dense(4, 2)])])
        >>> g = graphaudit.to_networkx(net, inputs=Tensor(np.ones((1, 4), np.float32)))
        >>> inside(g, "call:0.0#1", "0"), inside(g, "call:0.0#1", "0.0"), inside(g, "call:0#1", "0.0")
        (True, True, False)
    """
    where = location(graph, node)
    return where is not None and _within(where, path)


def _nested(a: str, b: str) -> bool:
    return _within(a, b) or _within(b, a)


def _is_glue(graph: nx.MultiDiGraph, node: str) -> bool:
    """Functional glue: an op, or a call of a cell with sub-cells (it only passes a tensor on)."""
    attrs = graph.nodes[node]
    return attrs["kind"] == g.OP or (attrs["kind"] == g.CALL and not attrs["leaf"])


def direct_connections(graph: nx.MultiDiGraph, paths: Iterable[str]) -> set[tuple[str, str]]:
    """The pairs ``(A, B)`` of *paths* such that a tensor flows from inside A into B.

    *paths* are concrete cell paths (expand globs with :func:`resolve`). A tensor may pass
    through functional glue lying inside none of *paths*; it stops at the first node inside
    another listed path. Pairs of nested paths (one inside the other) are never reported.

    Example:
        >>> import graphaudit, numpy as np
        >>> from mindspore import nn, Tensor, ops
        >>> class Residual(nn.Cell):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.body, self.skip, self.act = nn.Dense(4, 4), nn.Dense(4, 4), nn.ReLU()
        ...     def construct(self, x):
        ...         return self.act(self.body(x) + self.skip(x))
        >>> g = graphaudit.to_networkx(Residual(), inputs=Tensor(np.ones((1, 4), np.float32)))
        >>> sorted(direct_connections(g, ["body", "skip", "act"]))
        [('body', 'act'), ('skip', 'act')]
    """
    listed = list(dict.fromkeys(paths))
    members: dict[str, list[str]] = {}
    for node, attrs in graph.nodes(data=True):
        if attrs["kind"] in (g.CALL, g.OP):
            where = location(graph, node)
            assert where is not None
            members[node] = [p for p in listed if _within(where, p)]
    flows: dict[str, list[str]] = {}
    for source, target, attrs in graph.edges(data=True):
        if attrs["kind"] == g.FLOWS:
            flows.setdefault(source, []).append(target)

    found: set[tuple[str, str]] = set()
    for a in listed:
        starts = [node for node, inside_of in members.items() if a in inside_of]
        seen = set(starts)
        queue = deque(starts)
        while queue:
            for target in flows.get(queue.popleft(), ()):
                if target in seen:
                    continue
                seen.add(target)
                inside_of = members.get(target)
                if inside_of is None:  # an output node: the end of the line
                    continue
                if inside_of:
                    found.update((a, b) for b in inside_of if not _nested(a, b))
                    continue
                if _is_glue(graph, target):
                    queue.append(target)
    return found


def connected(graph: nx.MultiDiGraph, source: str, target: str) -> bool:
    """Whether a tensor flows from inside cell *source* into cell *target*.

    The rule is :func:`direct_connections` with only these two paths listed.

    Example:
        >>> import graphaudit, numpy as np
        >>> from mindspore import nn, Tensor
        >>> net = nn.SequentialCell([nn.Dense(4, 8), nn.ReLU(), nn.Dense(8, 2)])
        >>> g = graphaudit.to_networkx(net, inputs=Tensor(np.ones((1, 4), np.float32)))
        >>> connected(g, "0", "1"), connected(g, "1", "0"), connected(g, "0", "2")
        (True, False, False)
    """
    return (source, target) in direct_connections(graph, [source, target])


def resolve(graph: nx.MultiDiGraph, pattern: str) -> list[str]:
    """The cell paths matching *pattern*, a concrete path or an ``fnmatch`` glob, in graph order.

    A concrete path gives itself when it is a cell path, else nothing. A glob is matched
    against every path of every cell (all paths of a shared cell); ``*`` crosses dots, as in
    :class:`~graphaudit.spec.Spec`, and never matches the root ``""``.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> net = nn.SequentialCell([nn.SequentialCell([nn.Dense(4, 4)]), nn.Dense(4, 2)])
        >>> g = graphaudit.to_networkx(net)
        >>> resolve(g, "0.*"), resolve(g, "*"), resolve(g, "1"), resolve(g, "9")
        (['0.0'], ['0', '1', '0.0'], ['1'], [])
    """
    by_path = g.cell_nodes_by_path(graph)
    if not _GLOB.search(pattern):
        return [pattern] if pattern in by_path else []
    return [path for path in by_path if path and fnmatchcase(path, pattern)]


def close_paths(graph: nx.MultiDiGraph, pattern: str, n: int = 3) -> list[str]:
    """Up to *n* cell paths that look like *pattern*, for "did you mean" messages.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> class Net(nn.Cell):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.encoder, self.decoder = nn.Dense(4, 4), nn.Dense(4, 4)
        >>> close_paths(graphaudit.to_networkx(Net()), "encodr")
        ['encoder', 'decoder']
    """
    paths = [path for path in g.cell_nodes_by_path(graph) if path]
    return close_matches(pattern, paths, n=n)
