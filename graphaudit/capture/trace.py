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
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
from mindspore import Parameter, Tensor, nn

from graphaudit import graph as g
from graphaudit.capture.patching import OpSite, patched
from graphaudit.capture.structure import Structure

__all__ = ["Run", "Tracer", "describe_tensor", "flatten_tensors", "trace_forward", "tracing"]

# Only one capture at a time may own the patched entry points.
_CAPTURE_LOCK = threading.RLock()
_active: Tracer | None = None

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


def flatten_tensors(value: Any, _depth: int = 0) -> Iterator[Tensor]:
    """Tensors inside *value* (a tensor, or tuples/lists/dicts of them), in order."""
    if isinstance(value, Tensor):
        yield value
    elif _depth < 8 and isinstance(value, (tuple, list)):
        for item in value:
            yield from flatten_tensors(item, _depth + 1)
    elif _depth < 8 and isinstance(value, dict):
        for item in value.values():
            yield from flatten_tensors(item, _depth + 1)


def describe_tensor(tensor: Tensor) -> dict[str, Any]:
    return {"shape": g.shape_json(tensor.shape), "dtype": str(tensor.dtype)}


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
    ) -> None:
        self.graph = graph
        self.expand = expand
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

    def _consume(self, node: str, value: Any) -> None:
        """Add ``flows``/``reads`` edges into *node* for every tensor in *value*."""
        for slot, tensor in enumerate(flatten_tensors(value)):
            if isinstance(tensor, Parameter):
                self._read(node, tensor)
                continue
            source = self._producer(tensor)
            if source is not None:
                self.graph.add_edge(
                    source[0],
                    node,
                    kind=g.FLOWS,
                    src_slot=source[1],
                    dst_slot=slot,
                    **describe_tensor(tensor),
                )

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
            for tensor in flatten_tensors(frame.args):
                if isinstance(tensor, Parameter):
                    self._read(node, tensor)
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
                self.graph.add_edge(
                    source[0],
                    frame.node,
                    kind=g.FLOWS,
                    src_slot=source[1],
                    dst_slot=slot,
                    **describe_tensor(tensor),
                )
            else:
                self._consume_args(frame)
            self._set_producer(tensor, frame.node, slot)

    def record_op(
        self, site_label: str, op_name: str, args: tuple[Any, ...], kwargs: dict[str, Any], output: Any
    ) -> None:
        scope = self.stack[-1] if self.stack else None
        if scope is not None and scope.leaf:
            for tensor in flatten_tensors((args, kwargs)):
                if isinstance(tensor, Parameter):
                    self._read(scope.node, tensor)
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
        self._consume(node, (args, kwargs))
        for slot, tensor in enumerate(outputs):
            if not isinstance(tensor, Parameter):
                self._set_producer(tensor, node, slot)

    def before_op(self, raw_name: str, op_name: str, args: tuple[Any, ...]) -> None:
        # ``add_``-style methods work in place, like the assign/scatter family.
        if _MUTATING_OP_TYPE.search(op_name) or (raw_name.endswith("_") and not raw_name.endswith("__")):
            self.before_write(args)

    def before_write(self, args: tuple[Any, ...]) -> None:
        """Save every Parameter in *args*: the operation about to run may write into it."""
        for tensor in flatten_tensors(args):
            if isinstance(tensor, Parameter):
                self.on_parameter_write(tensor)


# -- the wrappers installed by patching.patched --------------------------------------------
def _wrap_cell_call(original: Callable[..., Any]) -> Callable[..., Any]:
    def traced_cell_call(cell: nn.Cell, *args: Any, **kwargs: Any) -> Any:
        tracer = _active
        if tracer is None or tracer.op_depth:
            return original(cell, *args, **kwargs)
        frame = tracer.enter_call(cell, args, kwargs)
        try:
            output = original(cell, *args, **kwargs)
        except BaseException:
            if tracer.failed_path is None:
                tracer.failed_path = tracer.graph.nodes[frame.node]["path"]
            tracer.stack.remove(frame)
            raise
        tracer.exit_call(frame, output)
        return output

    traced_cell_call.__wrapped__ = original  # type: ignore[attr-defined]
    return traced_cell_call


def _run_op(
    tracer: Tracer,
    label: str,
    raw_name: str,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    op_name = op_type_of(raw_name)
    tracer.before_op(raw_name, op_name, args)
    tracer.op_depth += 1
    try:
        output = fn(*args, **kwargs)
    finally:
        tracer.op_depth -= 1
    tracer.record_op(label, op_name, args, kwargs, output)
    return output


def _wrap_op(site: OpSite, original: Callable[..., Any]) -> Callable[..., Any]:
    def traced_op(*args: Any, **kwargs: Any) -> Any:
        tracer = _active
        if tracer is None or tracer.op_depth:
            return original(*args, **kwargs)
        return _run_op(tracer, site.label, site.name, original, args, kwargs)

    traced_op.__wrapped__ = original  # type: ignore[attr-defined]
    traced_op.__name__ = site.name
    traced_op.__doc__ = getattr(original, "__doc__", None)
    return traced_op


def _wrap_primitive_call(original: Callable[..., Any]) -> Callable[..., Any]:
    def traced_primitive_call(prim: Any, *args: Any, **kwargs: Any) -> Any:
        tracer = _active
        if tracer is not None and prim.attrs.get("side_effect_mem"):
            # A primitive that writes its inputs (Assign, ApplyMomentum, Adam...: what an
            # optimizer step runs), at any depth: what it writes is put back after the pass.
            tracer.before_write((args, kwargs))
        if tracer is None or tracer.op_depth:
            return original(prim, *args, **kwargs)
        name = str(getattr(prim, "name", type(prim).__name__))

        def bound(*a: Any, **k: Any) -> Any:
            return original(prim, *a, **k)

        return _run_op(tracer, f"P.{name}", name, bound, args, kwargs)

    traced_primitive_call.__wrapped__ = original  # type: ignore[attr-defined]
    return traced_primitive_call


Run = Callable[[Tracer, nn.Cell, tuple[Any, ...]], Any]


@contextmanager
def tracing(cells: Iterable[nn.Cell]) -> Iterator[Run]:
    """Install the tracing wrappers once; yield ``run(tracer, cell, args)``, which traces one call.

    Several calls can be traced in one session (the network, then its loss on the output),
    each into its own tracer; the wrappers are removed when the session ends.
    """
    with _CAPTURE_LOCK:
        if _active is not None:
            raise RuntimeError("graphaudit captures cannot be nested")
        with patched(iter(cells), _wrap_cell_call, _wrap_op, _wrap_primitive_call):
            yield _run_traced


def _run_traced(tracer: Tracer, cell: nn.Cell, args: tuple[Any, ...]) -> Any:
    global _active
    _active = tracer
    try:
        tracer.add_inputs(args)
        output = cell(*args)
        tracer.add_outputs(output)
    finally:
        _active = None
    return output


def trace_forward(tracer: Tracer, net: nn.Cell, inputs: tuple[Any, ...]) -> Any:
    """Run ``net(*inputs)`` once with every entry point traced into ``tracer``."""
    with tracing(tracer.structure.cells.values()) as run:
        return run(tracer, net, inputs)
