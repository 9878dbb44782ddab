"""The dynamic part of the graph: one real PyNative forward pass, recorded.

Every tensor seen crossing a recorded node is remembered with the node (and output
slot) that produced it; a later consumer of the same tensor object gets a ``flows`` edge
from that producer. Recorded nodes are cell calls and the operations run *between*
cells (in the body of a cell that has sub-cells, or at the top level). What happens
inside a leaf cell (one without sub-cells) is that cell's own business and is not
expanded, except that the parameters it passes to operations are recorded as ``reads``.
"""

from __future__ import annotations

import functools
import json
import re
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
from mindspore import Parameter, Tensor, nn

from graphaudit import graph as g
from graphaudit.capture.network.layout import LAYOUT_OPS, layout_of
from graphaudit.capture.network.structure import Structure, dtype_name

__all__ = ["Tracer", "describe_tensor", "flatten_tensors", "op_type_of", "parameters_in"]


# Operations that write into their first tensor argument; a Parameter passed to one of
# them is saved first so the capture can put it back.
_MUTATING_OP_TYPE = re.compile(r"^(assign|scatter|setitem|inplace|index(put|add|fill|copy))")
_DUNDER = re.compile(r"^__(?:[ri](?=add|sub|mul|truediv|floordiv|mod|pow|matmul|and|or|xor))?(\w+?)__$")


@functools.lru_cache(maxsize=4096)
def op_type_of(name: str) -> str:
    """Normalised operation name: ``__iadd__``, ``add`` and ``Add`` all give ``add``."""
    dunder = _DUNDER.match(name)
    if dunder:
        name = dunder.group(1)
    return re.sub(r"[^a-z0-9]", "", name.lower())


@functools.lru_cache(maxsize=4096)
def _writes_in_place(raw_name: str, op_name: str) -> bool:
    # ``add_``-style methods work in place, like the assign/scatter family.
    return bool(_MUTATING_OP_TYPE.search(op_name)) or (raw_name.endswith("_") and not raw_name.endswith("__"))


def flatten_tensors(value: Any) -> list[Tensor]:
    """Tensors inside *value* (a tensor, or tuples/lists/dicts of them, 8 levels deep), in order.

    Called for every argument and result of every traced operation: a tensor and a flat
    tuple of tensors, by far the most common cases, take no recursion.
    """
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        if all(isinstance(item, Tensor) for item in value):
            return list(value)
    elif not isinstance(value, dict):
        return []
    found: list[Tensor] = []
    _collect(value, found, 0)
    return found


def parameters_in(values: Iterable[Any]) -> Iterator[Parameter]:
    """The Parameters among *values* and inside the containers among them, in order.

    Each value is looked at once; only a container is searched (:func:`flatten_tensors`):
    the arguments of an operation mix tensors with numbers and tuples of numbers.

    Example:
        >>> import numpy as np
        >>> from mindspore import Parameter, Tensor
        >>> w, b = Parameter(Tensor(np.ones(2)), name="w"), Parameter(Tensor(np.zeros(2)), name="b")
        >>> [p.name for p in parameters_in((Tensor(np.ones(2)), w, 3, (1, 2), {"bias": b}))]
        ['w', 'b']
    """
    for value in values:
        if isinstance(value, Parameter):
            yield value
        elif isinstance(value, (tuple, list, dict)):
            for tensor in flatten_tensors(value):
                if isinstance(tensor, Parameter):
                    yield tensor


def _collect(value: Any, found: list[Tensor], depth: int) -> None:
    if isinstance(value, Tensor):
        found.append(value)
    elif depth < 8 and isinstance(value, (tuple, list)):
        for item in value:
            _collect(item, found, depth + 1)
    elif depth < 8 and isinstance(value, dict):
        for item in value.values():
            _collect(item, found, depth + 1)


#: How many flows later a flow's tensor is described (:meth:`Tracer._flow`): the tensors waiting
#: are kept alive that long, a few events' worth.
DESCRIBE_LAG = 8


def describe_tensor(tensor: Tensor) -> dict[str, Any]:
    return {"shape": g.shape_json(tensor.shape), "dtype": dtype_name(tensor.dtype)}


@dataclass
class _Frame:
    node: str
    cell: nn.Cell
    leaf: bool
    first_seq: int
    args: tuple[Any, ...]
    reads: set[str] = field(default_factory=set)
    consumed_args: bool = False


class Tracer:
    """Records one forward pass into *graph*, using the cell/parameter nodes of *structure*."""

    def __init__(
        self,
        graph: nx.MultiDiGraph,
        structure: Structure,
        on_parameter_write: Callable[[Parameter], None],
        expand: frozenset[int] = frozenset(),
        stand_in: Callable[[Parameter], Tensor | None] = lambda param: None,
    ) -> None:
        self.graph = graph
        self.expand = expand
        #: A copy of a parameter for a kernel to write in its place (Snapshot.stand_in), or None.
        self.stand_in = stand_in
        self.structure = structure
        self.on_parameter_write = on_parameter_write
        self.stack: list[_Frame] = []
        self.op_depth = 0
        self.seq = 0
        self.node_seq: dict[str, int] = {}
        self.call_counts: dict[str, int] = {}
        self.producers: dict[int, tuple[weakref.ref[Tensor], str, int]] = {}
        self.failed_path: str | None = None
        self.n_ops = 0
        # Flow edges' attribute dicts waiting for their tensor's shape and dtype (_flow).
        self._undescribed: deque[tuple[dict[str, Any], Tensor]] = deque()

    # -- bookkeeping ---------------------------------------------------------------
    def _new_node(self, node: str, **attrs: Any) -> str:
        self.seq += 1
        self.node_seq[node] = self.seq
        self.graph.add_node(node, order=self.seq, **attrs)
        if self.stack:
            self.graph.add_edge(self.stack[-1].node, node, kind=g.ENCLOSES)
        return node

    def _producer(self, tensor: Tensor) -> tuple[str, int] | None:
        entry = self.producers.get(id(tensor))
        if entry is None or entry[0]() is not tensor:
            return None
        return entry[1], entry[2]

    def _set_producer(self, tensor: Tensor, node: str, slot: int) -> None:
        self.producers[id(tensor)] = (weakref.ref(tensor), node, slot)

    def _parameter_node(self, param: Parameter) -> str:
        node = self.structure.parameter_nodes.get(id(param))
        if node is None:
            # Not registered in the network tree (kept in a plain list, or created in
            # construct): still recorded, so that checks can report it.
            node = self.structure.add_parameter(self.graph, param, "", registered=False)
        return node

    def _flow(self, source: tuple[str, int], node: str, slot: int, tensor: Tensor) -> None:
        """A ``flows`` edge from *source* (node, slot) into *node*'s *slot*, carrying *tensor*.

        Its shape and dtype are read :data:`DESCRIBE_LAG` events later: read right after the
        operation that makes the tensor was queued, they wait for MindSpore to infer it
        (~0.15-0.5 ms on a 2-core CPU; the pass's own kernels run meanwhile).
        """
        key = self.graph.add_edge(source[0], node, kind=g.FLOWS, src_slot=source[1], dst_slot=slot)
        self._undescribed.append((self.graph._succ[source[0]][node][key], tensor))
        if len(self._undescribed) > DESCRIBE_LAG:
            data, described = self._undescribed.popleft()
            data.update(describe_tensor(described))

    def describe_flows(self) -> None:
        """Give every ``flows`` edge recorded so far its shape and dtype (done when the pass ends)."""
        while self._undescribed:
            data, tensor = self._undescribed.popleft()
            data.update(describe_tensor(tensor))

    def _consume(self, node: str, value: Any) -> None:
        """Add ``flows``/``reads`` edges into *node* for every tensor in *value*."""
        for slot, tensor in enumerate(flatten_tensors(value)):
            if isinstance(tensor, Parameter):
                self._read(node, tensor)
                continue
            source = self._producer(tensor)
            if source is not None:
                self._flow(source, node, slot, tensor)

    def _read(self, node: str, param: Parameter) -> None:
        pnode = self._parameter_node(param)
        frame = self.stack[-1] if self.stack and self.stack[-1].node == node else None
        if frame is not None:
            if pnode in frame.reads:
                return
            frame.reads.add(pnode)
        self.graph.add_edge(pnode, node, kind=g.READS)

    # -- the recorded events ---------------------------------------------------------
    def add_inputs(self, inputs: tuple[Any, ...]) -> None:
        for index, tensor in enumerate(flatten_tensors(inputs)):
            node = g.input_node(index)
            self.graph.add_node(node, kind=g.INPUT, index=index, **describe_tensor(tensor))
            if not isinstance(tensor, Parameter):
                self._set_producer(tensor, node, 0)

    def add_outputs(self, outputs: Any) -> None:
        self.describe_flows()
        for index, tensor in enumerate(flatten_tensors(outputs)):
            node = g.output_node(index)
            self.graph.add_node(node, kind=g.OUTPUT, index=index, **describe_tensor(tensor))
            source = self._producer(tensor)
            if source is not None:
                self.graph.add_edge(
                    source[0], node, kind=g.FLOWS, src_slot=source[1], dst_slot=0, **describe_tensor(tensor)
                )

    def enter_call(self, cell: nn.Cell, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Frame:
        cell_node = self.structure.cell_nodes.get(id(cell))
        if cell_node is not None:
            path = self.graph.nodes[cell_node]["path"]
            key = cell_node
        else:
            path = f"<{type(cell).__name__}>"
            key = f"<{type(cell).__name__}@{id(cell)}>"
        index = self.call_counts[key] = self.call_counts.get(key, 0) + 1
        node = g.call_node(path if cell_node is not None else key, index)
        # The network's own call is always expanded, even when it has no sub-cells.
        leaf = (
            bool(self.stack)
            and id(cell) not in self.expand
            and not any(child is not None for child in cell._cells.values())
        )
        self._new_node(
            node,
            kind=g.CALL,
            cell=cell_node or "",
            path=path,
            class_name=type(cell).__name__,
            index=index,
            leaf=leaf,
        )
        if cell_node is not None:
            self.graph.add_edge(node, cell_node, kind=g.INVOKES)
        if id(cell) in self.expand:
            self.graph.nodes[node]["args"] = self._arg_sources(args)
        frame = _Frame(node=node, cell=cell, leaf=leaf, first_seq=self.seq, args=(args, kwargs))
        self.stack.append(frame)
        if leaf:
            self._consume_args(frame)
        else:
            for param in parameters_in(frame.args):
                self._read(node, param)
        return frame

    def _arg_sources(self, args: tuple[Any, ...]) -> str:
        """``[[argument, producer, slot], ...]`` for each tensor of the positional *args*, as JSON.

        Recorded on the calls of expanded cells (a loss inside a network-with-loss), whose
        body consumes the tensors directly: which tensor is which argument is kept here.
        """
        sources = []
        for position, value in enumerate(args):
            for tensor in flatten_tensors(value):
                source = self._producer(tensor)
                sources.append([position, *(source if source is not None else ("", 0))])
        return json.dumps(sources)

    def _consume_args(self, frame: _Frame) -> None:
        if not frame.consumed_args:
            frame.consumed_args = True
            self._consume(frame.node, frame.args)

    def exit_call(self, frame: _Frame, output: Any) -> None:
        popped = self.stack.pop()
        assert popped is frame
        for slot, tensor in enumerate(flatten_tensors(output)):
            if isinstance(tensor, Parameter):
                continue
            source = self._producer(tensor)
            if frame.leaf:
                self._set_producer(tensor, frame.node, slot)
                continue
            if source is not None and self.node_seq.get(source[0], 0) > frame.first_seq:
                continue  # made by a node inside this call: that node stays its producer
            # The body handed back a tensor made outside it (a pass-through), or one made by
            # something the tracer cannot see: the call itself is shown as producing it.
            if source is not None:
                self._flow(source, frame.node, slot, tensor)
            else:
                self._consume_args(frame)
            self._set_producer(tensor, frame.node, slot)

    def record_op(
        self, site_label: str, op_name: str, args: tuple[Any, ...], kwargs: dict[str, Any], output: Any
    ) -> None:
        scope = self.stack[-1] if self.stack else None
        if scope is not None and scope.leaf:
            # Most operations run inside leaf cells (a convolution's, a BatchNorm's): only the
            # parameters they read are recorded.
            for param in parameters_in((*args, *kwargs.values()) if kwargs else args):
                self._read(scope.node, param)
            return
        outputs = list(flatten_tensors(output))
        if op_name == "setitem" and args and isinstance(args[0], Tensor):
            outputs = [args[0]]  # ``x[i] = v`` returns None and changes x itself
        if not outputs:
            return
        self.n_ops += 1
        scope_path = self.graph.nodes[scope.node]["path"] if scope is not None else ""
        node = self._new_node(
            g.op_node(scope_path, op_name, self.n_ops),
            kind=g.OP,
            op=site_label,
            op_type=op_name,
            scope=scope_path,
        )
        if op_name in LAYOUT_OPS:
            layout = layout_of(op_name, args, kwargs, outputs)
            if layout is not None:
                self.graph.nodes[node]["layout"] = layout
        self._consume(node, (args, kwargs))
        for slot, tensor in enumerate(outputs):
            if not isinstance(tensor, Parameter):
                self._set_producer(tensor, node, slot)

    def before_op(self, raw_name: str, op_name: str, args: tuple[Any, ...]) -> None:
        if _writes_in_place(raw_name, op_name):
            self.before_write(args)

    def before_write(self, args: tuple[Any, ...]) -> None:
        """Save every Parameter in *args*: the operation about to run may write into it.

        The save queues kernels of its own (a device-side copy): they run as inside an
        operation, passed through by the wrappers, not recorded.
        """
        self.op_depth += 1
        try:
            for param in parameters_in(args):
                self.on_parameter_write(param)
        finally:
            self.op_depth -= 1
