"""The static part of the graph: cells, parameters, ``contains`` and ``owns`` edges.

This walks the ``_cells`` / ``_params`` tables that MindSpore itself uses for
``cells_and_names`` and ``parameters_and_names``, but keeps *every* path to a shared
object instead of the first one, and identifies cells and parameters by object, so
sharing shows up as one node with several incoming edges.
"""

from __future__ import annotations

import functools
import gc
import math
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import mindspore as ms
import networkx as nx
from mindspore import Parameter, nn

from graphaudit import graph as g
from graphaudit.capture.compilation.jit import compiled_boundaries

__all__ = ["Structure", "add_structure", "dtype_name", "gc_frozen", "gc_paused"]

# A pathological network can reach one cell through exponentially many paths (a shared
# block inside a shared block...); past this many, further paths are not listed.
MAX_PATHS_PER_NODE = 64


@dataclass
class Structure:
    """The objects behind the graph's nodes: node ids by object id, and objects by node id.

    It is also the one place that creates parameter nodes (:meth:`add_parameter`), for the
    walk and for the tracer, which meets parameters the network does not register.
    """

    cell_nodes: dict[int, str] = field(default_factory=dict)
    parameter_nodes: dict[int, str] = field(default_factory=dict)
    cells: dict[str, nn.Cell] = field(default_factory=dict)
    parameters: dict[str, Parameter] = field(default_factory=dict)

    def add_parameter(
        self, graph: nx.MultiDiGraph, param: Parameter, path: str, *, registered: bool = True
    ) -> str:
        """Add the node of *param* (first met at attribute *path*) and return its id.

        An unregistered parameter (kept in a plain list, or made in ``construct``) has no
        path and gets ``registered=False``; its ``paths`` are known at once (none), those of
        a registered one are filled in when the walk ends.
        """
        name = param.name  # a property that does work on every access
        node = g.unique_node_id(graph, g.parameter_node(name))
        shape = tuple(int(d) for d in param.shape)
        attrs = {
            "kind": g.PARAMETER,
            "name": name,
            "path": path,
            "shape": g.shape_json(shape),
            "dtype": dtype_name(param.dtype),
            "requires_grad": bool(param.requires_grad),
            "numel": math.prod(shape),
        }
        if not registered:
            attrs.update(paths="[]", registered=False)
        graph.add_node(node, **attrs)
        self.parameter_nodes[id(param)] = node
        self.parameters[node] = param
        return node


@functools.cache
def dtype_name(dtype: Any) -> str:
    """``str(dtype)``, made once per dtype (MindSpore makes the text anew on each call, ~4 us,
    and it is asked once per traced tensor and per parameter).

    Example:
        >>> import mindspore as ms
        >>> dtype_name(ms.float32)
        'Float32'
    """
    return str(dtype)


def _real_parameter(param: Parameter) -> Parameter:
    # Lazily initialised parameters hand out their initialised twin, as MindSpore does.
    inited = getattr(param, "inited_param", None)
    return inited if inited is not None else param


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector (as it was before, on exit).

    Building the graph allocates a few container objects per cell and parameter, none of
    them garbage; with the collector running, each generation-2 pass scans every object of
    the (large) network, which made the walk of a 30,000-cell network 2.3x slower.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def gc_frozen() -> Iterator[None]:
    """Keep Python's cyclic garbage collector off every object that exists now (the network).

    ``gc.freeze()`` moves them to the permanent generation, which collections do not scan;
    ``gc.unfreeze()`` puts them back into the oldest generation on exit. Between the paused
    parts of an audit (the walk, each check), collections still run over what the audit
    allocates, but no longer over the several million objects of a large network (a
    structure audit at 50,000 cells spent most of its extra time there). A process that froze
    objects itself (a pre-fork server), or runs with the collector off, is left alone: its
    frozen objects must stay frozen.
    """
    if gc.get_freeze_count() or not gc.isenabled():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def add_structure(graph: nx.MultiDiGraph, net: nn.Cell) -> Structure:
    """Add one node per cell and per parameter object of *net*, with their edges."""
    with gc_paused():
        return _add_structure(graph, net)


def _add_structure(graph: nx.MultiDiGraph, net: nn.Cell) -> Structure:
    found = Structure()
    cell_paths: dict[str, list[str]] = {}
    param_paths: dict[str, list[str]] = {}
    child_edges: list[tuple[str, int, str]] = []
    queue: deque[tuple[nn.Cell, str, tuple[int, ...]]] = deque([(net, "", ())])
    # A script in GRAPH_MODE compiles the network it calls as a whole.
    whole = "graph-mode" if ms.get_context("mode") == ms.GRAPH_MODE else ""

    while queue:
        cell, path, ancestors = queue.popleft()
        node = found.cell_nodes.get(id(cell))
        if node is not None:
            # Already walked through another path: only the extra path is new.
            if len(cell_paths[node]) < MAX_PATHS_PER_NODE:
                cell_paths[node].append(path)
                _note_extra_parameter_paths(cell, path, found, param_paths)
                _queue_children(queue, cell, path, ancestors, None, child_edges)
            continue

        node = g.unique_node_id(graph, g.cell_node(path))
        found.cell_nodes[id(cell)] = node
        found.cells[node] = cell
        cell_paths[node] = [path]
        compiled, jit_functions = compiled_boundaries(cell)
        graph.add_node(
            node,
            kind=g.CELL,
            path=path,
            class_name=type(cell).__name__,
            module=type(cell).__module__,
            training=bool(cell.training),
            n_children=sum(1 for c in cell._cells.values() if c is not None),
            n_params=sum(1 for p in cell._params.values() if p is not None),
            compiled=(whole or compiled) if cell is net else compiled,
            jit_functions=g.to_json_list(jit_functions),
        )
        for attr, param in cell._params.items():
            if param is None:
                continue
            param = _real_parameter(param)
            pnode = found.parameter_nodes.get(id(param))
            if pnode is None:
                pnode = found.add_parameter(graph, param, _join(path, attr))
                param_paths[pnode] = [_join(path, attr)]
            elif len(param_paths[pnode]) < MAX_PATHS_PER_NODE:
                param_paths[pnode].append(_join(path, attr))
            graph.add_edge(node, pnode, kind=g.OWNS, name=attr)
        _queue_children(queue, cell, path, ancestors, node, child_edges)

    for parent, child_id, name in child_edges:
        graph.add_edge(parent, found.cell_nodes[child_id], kind=g.CONTAINS, name=name)
    for node, paths in (*cell_paths.items(), *param_paths.items()):
        graph.nodes[node]["paths"] = g.to_json_list(paths)
    return found


def _note_extra_parameter_paths(
    cell: nn.Cell, path: str, found: Structure, param_paths: dict[str, list[str]]
) -> None:
    for attr, param in cell._params.items():
        if param is None:
            continue
        pnode = found.parameter_nodes[id(_real_parameter(param))]
        if len(param_paths[pnode]) < MAX_PATHS_PER_NODE:
            param_paths[pnode].append(_join(path, attr))


def _queue_children(
    queue: deque[tuple[nn.Cell, str, tuple[int, ...]]],
    cell: nn.Cell,
    path: str,
    ancestors: tuple[int, ...],
    node: str | None,
    child_edges: list[tuple[str, int, str]],
) -> None:
    """Queue *cell*'s children; record ``contains`` edges only on the first visit (*node*)."""
    inner = (*ancestors, id(cell))
    for name, child in cell._cells.items():
        if child is None or id(child) in inner:
            continue
        queue.append((child, _join(path, name), inner))
        if node is not None:
            child_edges.append((node, id(child), name))
