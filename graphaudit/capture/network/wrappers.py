"""The wrappers that feed a :class:`~graphaudit.capture.network.recorder.Tracer`, and the session that installs them.

:func:`tracing` installs the wrappers (:func:`graphaudit.capture.network.patching.patched`) once
and yields ``run(tracer, cell, args)``: every cell call, functional operation, tensor method
and primitive call made while ``run`` executes is reported to *tracer*. Outside ``run`` (and
inside an operation already being recorded) the wrappers only call the original.

The tracer is held per thread: while one thread traces, the calls of every other thread (its
own training, its own forward passes, its ``ops.assign`` writes) go straight to the
originals and are neither recorded nor saved for the restore. What changes process-wide
state (the context mode, the random states, the installed wrappers) is done by one audit at a
time: :data:`EXCLUSIVE` is held around a capture, a probe and a graph-mode compile.

Example:
    >>> import numpy as np
    >>> import networkx as nx
    >>> from mindspore import nn, Tensor
    >>> from graphaudit.capture.network.structure import add_structure
    >>> from graphaudit.capture.network.recorder import Tracer
    >>> net = nn.SequentialCell([nn.Dense(2, 2), nn.ReLU()])
    >>> graph = nx.MultiDiGraph()
    >>> tracer = Tracer(graph, add_structure(graph, net), lambda p: None)
    >>> trace_forward(tracer, net, (Tensor(np.ones((1, 2), np.float32)),)).shape
    (1, 2)
    >>> sorted(n for n, d in graph.nodes(data=True) if d["kind"] == "call")
    ['call:#1', 'call:0#1', 'call:1#1']
"""

from __future__ import annotations

import threading
import types
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from mindspore import Parameter, Tensor, nn

from graphaudit.capture.network.patching import OpSite, cell_call_owners, patched
from graphaudit.capture.network.recorder import Tracer, op_type_of

__all__ = [
    "EXCLUSIVE",
    "Run",
    "active_tracer",
    "installed",
    "trace_forward",
    "tracing",
    "with_stand_ins",
    "written_by",
]

#: Held by the audit that owns the patched entry points and the process-wide state it saves and
#: puts back (mode, random states): one capture, probe or graph-mode compile at a time.
EXCLUSIVE = threading.RLock()
_CAPTURE_LOCK = EXCLUSIVE
_this_thread = threading.local()


def active_tracer() -> Tracer | None:
    """The tracer of the calling thread's traced pass, ``None`` outside one (and in every other thread)."""
    return getattr(_this_thread, "tracer", None)


# -- the wrappers installed by patching.patched --------------------------------------------
def _wrap_cell_call(original: Callable[..., Any]) -> Callable[..., Any]:
    def traced_cell_call(cell: nn.Cell, *args: Any, **kwargs: Any) -> Any:
        tracer = active_tracer()
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
        tracer = active_tracer()
        if tracer is None or tracer.op_depth:
            return original(*args, **kwargs)
        return _run_op(tracer, site.label, site.name, original, args, kwargs)

    traced_op.__wrapped__ = original  # type: ignore[attr-defined]
    traced_op.__name__ = site.name
    if isinstance(original, types.FunctionType):
        # A Python function's docstring is one stored string; a builtin's or a Cython
        # function's is made anew on each read (about 1 KiB each, 0.2 MiB per install of the
        # wrappers), so theirs stays on the original, one __wrapped__ away.
        traced_op.__doc__ = original.__doc__
    return traced_op


#: The inputs that a primitive with ``side_effect_mem`` writes, by position, where MindSpore's
#: signature says (``sig_rw.RW_WRITE``; its ``Signature`` objects cannot be read from Python).
#: Any other such primitive may write every Parameter it is given. BatchNorm reads its scale and
#: bias and writes only the moving mean and variance: saving the scale and bias as well cost a
#: wait for the queued kernels at each of resnet50's 53 BatchNorm cells, ~0.9x a training-mode
#: forward pass (issue 40). What a primitive writes here is given a stand-in where the snapshot
#: holds one (:func:`with_stand_ins`): only primitives whose outputs do not depend on what they
#: write belong here (BatchNorm has ``side_effect_mem`` only in training mode, where it
#: normalises with the batch's statistics).
WRITTEN_INPUTS: dict[str, tuple[int, ...]] = {"BatchNorm": (3, 4)}


def written_by(prim: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """What the primitive *prim*, called with *args* and *kwargs*, may write into.

    Example:
        >>> from mindspore import ops
        >>> written_by(ops.BatchNorm(), ("x", "scale", "bias", "mean", "variance"), {})
        ('mean', 'variance')
        >>> written_by(ops.Assign(), ("variable", "value"), {})
        (('variable', 'value'), {})
    """
    positions = _written_positions(prim, args, kwargs)
    return (args, kwargs) if positions is None else tuple(args[i] for i in positions)


def _written_positions(prim: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, ...] | None:
    """The positions of *args* that *prim* writes (:data:`WRITTEN_INPUTS`); ``None`` when not known for this call."""
    positions = WRITTEN_INPUTS.get(type(prim).__name__)
    return None if positions is None or kwargs or len(args) <= max(positions) else positions


def with_stand_ins(
    tracer: Tracer, prim: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, ...]:
    """*args*, each Parameter the primitive *prim* writes (:data:`WRITTEN_INPUTS`) replaced by its stand-in.

    ``tracer.stand_in`` gives the copy (:meth:`~graphaudit.capture.network.isolation.Snapshot.stand_in`),
    or ``None`` to leave the Parameter, to be put back after the pass.
    """
    positions = _written_positions(prim, args, kwargs)
    if positions is None:
        return args
    if len({arg.dtype for arg in args if isinstance(arg, Tensor)}) != 1:
        # Mixed dtypes (a float16 input under AMP, float32 statistics): MindSpore converts them
        # by other rules when a written input is not a Parameter and refuses the call.
        return args
    replaced = list(args)
    for position in positions:
        if isinstance(args[position], Parameter):
            stand_in = tracer.stand_in(args[position])
            if stand_in is not None:
                replaced[position] = stand_in
    return tuple(replaced)


def _wrap_primitive_call(original: Callable[..., Any]) -> Callable[..., Any]:
    def traced_primitive_call(prim: Any, *args: Any, **kwargs: Any) -> Any:
        tracer = active_tracer()
        run_args = args
        if tracer is not None and prim.attrs.get("side_effect_mem"):
            # A primitive that writes its inputs (Assign, ApplyMomentum, Adam...: what an
            # optimizer step runs), at any depth: what it writes is put back after the pass,
            # or written into a stand-in instead (BatchNorm's moving statistics).
            tracer.before_write(written_by(prim, args, kwargs))
            run_args = with_stand_ins(tracer, prim, args, kwargs)
        if tracer is None or tracer.op_depth:
            return original(prim, *run_args, **kwargs)
        name = str(getattr(prim, "name", type(prim).__name__))

        def bound(*_: Any, **k: Any) -> Any:
            # Recorded with the arguments it was given (the network's Parameters), run with
            # the stand-ins.
            return original(prim, *run_args, **k)

        return _run_op(tracer, f"P.{name}", name, bound, args, kwargs)

    traced_primitive_call.__wrapped__ = original  # type: ignore[attr-defined]
    return traced_primitive_call


Run = Callable[[Tracer, nn.Cell, tuple[Any, ...]], Any]


@contextmanager
def installed(cells: Iterable[nn.Cell]) -> Iterator[None]:
    """The tracing wrappers in place for the calls of *cells*, removed on exit; once a thread.

    An install sets ~3,400 entry points and removing them as many (~10 ms on resnet50): a
    capture that traces several calls (the network, then its loss, each in a capture of its
    own) opens one session around them all, and the sessions opened inside it reuse it,
    adding only the cell classes it lacks.
    """
    owners = cell_call_owners(cells)
    with _CAPTURE_LOCK:
        outer: set[type] | None = getattr(_this_thread, "owners", None)
        if outer is not None:
            missing = [owner for owner in owners if owner not in outer]
            with patched(missing, _wrap_cell_call, _wrap_op, _wrap_primitive_call, process_wide=False):
                _this_thread.owners = outer | set(missing)
                try:
                    yield
                finally:
                    _this_thread.owners = outer
            return
        with patched(owners, _wrap_cell_call, _wrap_op, _wrap_primitive_call):
            _this_thread.owners = set(owners)
            try:
                yield
            finally:
                _this_thread.owners = None


@contextmanager
def tracing(cells: Iterable[nn.Cell]) -> Iterator[Run]:
    """Install the tracing wrappers (:func:`installed`); yield ``run(tracer, cell, args)``, which traces one call.

    Several calls can be traced in one session (the network, then its loss on the output),
    each into its own tracer; the wrappers are removed when the session ends.
    """
    with _CAPTURE_LOCK:
        if active_tracer() is not None:
            raise RuntimeError("graphaudit captures cannot be nested")
        with installed(cells):
            yield _run_traced


def _run_traced(tracer: Tracer, cell: nn.Cell, args: tuple[Any, ...]) -> Any:
    _this_thread.tracer = tracer
    try:
        tracer.add_inputs(args)
        output = cell(*args)
        tracer.add_outputs(output)
    finally:
        _this_thread.tracer = None
    return output


def trace_forward(tracer: Tracer, net: nn.Cell, inputs: tuple[Any, ...]) -> Any:
    """Run ``net(*inputs)`` once with every entry point traced into ``tracer``."""
    with tracing(tracer.structure.cells.values()) as run:
        return run(tracer, net, inputs)
