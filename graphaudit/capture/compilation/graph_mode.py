"""Compile the network (and its training step) in GRAPH_MODE, run it, and compare with PyNative.

``mindspore.set_context(mode=GRAPH_MODE)`` compiles ``construct`` from its Python source
under the static-graph syntax (MindSpore's "static graph syntax support" constraints): a
network that runs in PyNative can fail to compile (a ``try`` statement, a variable defined
in one branch only, a generator), or compile and compute something else (an in-place write
through an alias that PyNative shares and graph mode copies). :func:`run_in_graph_mode`:

1. runs the network in PyNative and then in GRAPH_MODE on copies of the same inputs, in
   inference mode (``set_train(False)``: no Dropout mask, BatchNorm on its moving
   statistics), and compares the outputs;
2. compiles (``Cell.compile``, without running it) the training step the setup trains with,
   in the network's own training mode: the setup's ``TrainOneStepCell``, else
   ``nn.TrainOneStepCell(WithLossCell(net, loss_fn), optimizer)``;
3. puts everything back: the context mode, parameter values (in place), training flags,
   random states (:mod:`graphaudit.capture.network.isolation`).

A compile failure is kept as a :class:`CompileFailure`: MindSpore's own first sentence, and
the innermost frame of its "Traceback of Net Construct Code" that is the user's code (file,
line, the line's text). MindSpore writes ``rank_<id>/om/analyze_fail.ir`` after a failed
compile, under ``$MS_OM_PATH`` or else the current folder (read when it writes: verified
on 2.10). :func:`redirected_dumps` points ``MS_OM_PATH`` at a temporary folder for the
compile and deletes it afterwards, rather than changing the working folder: ``os.chdir``
would move every other thread's relative paths too. ``MS_OM_PATH`` and the context mode are
process-wide all the same: the compile holds :data:`LOCK`, and another thread compiling a
MindSpore graph at the same moment would write its dump into that folder too.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor, nn
    >>> result = run_in_graph_mode(nn.Dense(3, 2), (Tensor(np.ones((2, 3), np.float32)),))
    >>> result.failure is None, result.max_difference < 1e-5
    (True, True)
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import types
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

from graphaudit.capture.network.isolation import (
    fresh_random_primitives,
    preserved,
    preserved_seed_counters,
    synchronize,
    training_flags,
)
from graphaudit.capture.network.recorder import flatten_tensors
from graphaudit.capture.network.values import tensor_values
from graphaudit.capture.network.wrappers import EXCLUSIVE
from graphaudit.capture.training.optimizer import optimizer_state_parameters, unique
from graphaudit.capture.training.step_harness import (
    StepLoss,
    cells_of,
    graphs_not_saved,
    preserved_cell_grad_flags,
    restored_in_place,
)

__all__ = [
    "LOCK",
    "CompileFailure",
    "GraphModeResult",
    "redirected_dumps",
    "registered_modules",
    "run_in_graph_mode",
]

LOCK = EXCLUSIVE  # one audit at a time changes the context mode
_MINDSPORE = os.path.dirname(ms.__file__)
_GRAPHAUDIT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_ABSENT = object()
_FRAME = re.compile(r"In file (.+?):(\d+)(?:~\d+)?(?:, (\d+)~(\d+))?")


@dataclass(frozen=True)
class CompileFailure:
    """Why a GRAPH_MODE compile failed: MindSpore's sentence, where, and what (``stage``)."""

    stage: str  # "the forward pass" or "the training step"
    error: str  # the exception's class
    summary: str  # MindSpore's first sentence(s), without its C++ stack
    file: str | None = None
    line: int | None = None
    code: str = ""  # the source line
    span: str = ""  # the part of the line MindSpore points at (``self.block``), on one line


@dataclass(frozen=True)
class GraphModeResult:
    """The outcome: a failure, or both outputs compared (``max_difference`` relative to the output scale)."""

    failure: CompileFailure | None = None
    max_difference: float = 0.0
    scale: float = 0.0
    compared: int = 0  # tensors compared
    mismatch: str = ""  # a structural difference (count, shape, dtype), if any
    training_checked: bool = False
    how: str = "graph-mode"  # what was compiled: the whole network in GRAPH_MODE, or the user's "jit" code


@contextmanager
def redirected_dumps() -> Iterator[str]:
    """Point ``MS_OM_PATH`` (where ``analyze_fail.ir`` goes) at a temporary folder; delete it afterwards."""
    folder = tempfile.mkdtemp(prefix="graphaudit-graph-")
    before = os.environ.get("MS_OM_PATH")
    os.environ["MS_OM_PATH"] = folder
    try:
        yield folder
    finally:
        if before is None:
            os.environ.pop("MS_OM_PATH", None)
        else:
            os.environ["MS_OM_PATH"] = before
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def preserved_attributes(cells: list[nn.Cell]) -> Iterator[None]:
    """Put back every attribute a compile adds to or rebinds on the cells (``Cell.compile`` sets a few)."""
    saved = [(cell, dict(vars(cell))) for cell in cells]
    try:
        yield
    finally:
        for cell, before in saved:
            now = vars(cell)
            for key in [k for k in now if k not in before]:
                del now[key]
            for key, value in before.items():
                if now.get(key, _ABSENT) is not value:
                    now[key] = value


@contextmanager
def registered_modules(cells: list[nn.Cell]) -> Iterator[None]:
    """Make the modules the cells' classes come from importable while compiling; remove what was added.

    MindSpore's parser looks a class's module up in ``sys.modules``; a network defined in a
    file loaded by path (``importlib.util.spec_from_file_location``, the CLI's
    ``file.py:factory``) is not there, and would not compile for that reason alone.
    """
    added = []
    for cell in cells:
        kind = type(cell)
        name = kind.__module__
        construct = getattr(kind, "construct", None)
        namespace = getattr(construct, "__globals__", None)
        if name in sys.modules or namespace is None or namespace.get("__name__") != name:
            continue
        module = types.ModuleType(name)
        module.__dict__.update(namespace)
        sys.modules[name] = module
        added.append(name)
    try:
        yield
    finally:
        for name in added:
            sys.modules.pop(name, None)


def _summary(text: str) -> str:
    """MindSpore's own sentences, without its C++ stack, its construct traceback and its links."""
    lines = []
    for raw in text.strip().splitlines():
        line = raw.strip()
        if line.startswith(("- C++ Call Stack", "- The Traceback of Net Construct Code", "In file", "# ")):
            break
        if not line or set(line) <= {"-"} or "refer to" in line.lower() or line.startswith("node:"):
            continue
        lines.append(line.lstrip("- ").strip())
    return " ".join(lines)[:600] or "(no message)"


def _user_frame(text: str) -> tuple[str | None, int | None, str, str]:
    """The innermost frame of MindSpore's construct traceback in the user's code: file, line, code, span."""
    frames = [(f, int(n), a, b) for f, n, a, b in _FRAME.findall(text)]
    mine = [
        frame
        for frame in frames
        if os.path.isfile(frame[0]) and not os.path.abspath(frame[0]).startswith((_MINDSPORE, _GRAPHAUDIT))
    ]
    if not mine:
        return None, None, "", ""
    path, line, start, end = mine[-1]
    try:
        with open(path, encoding="utf-8") as source:
            raw = source.read().splitlines()[line - 1]
    except (OSError, IndexError):
        raw = ""
    span = raw[int(start) : int(end)] if start and end else ""
    return path, line, raw.strip(), span


def _failure(stage: str, err: Exception) -> CompileFailure:
    text = str(err)
    path, line, code, span = _user_frame(text)
    return CompileFailure(stage, type(err).__name__, _summary(text), path, line, code, span)


def _copies(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(Tensor(tensor_values(x).copy(), x.dtype) if isinstance(x, Tensor) else x for x in inputs)


def _compare(pynative: Any, graph: Any) -> tuple[float, float, int, str]:
    a, b = list(flatten_tensors(pynative)), list(flatten_tensors(graph))
    if len(a) != len(b):
        return 0.0, 0.0, 0, f"PyNative returns {len(a)} tensors, graph mode {len(b)}"
    worst, scale = 0.0, 0.0
    for x, y in zip(a, b):
        if tuple(x.shape) != tuple(y.shape) or x.dtype != y.dtype:
            return (
                0.0,
                0.0,
                0,
                f"PyNative returns {x.dtype}{list(x.shape)}, graph mode {y.dtype}{list(y.shape)}",
            )
        u, v = tensor_values(x).astype(np.float64), tensor_values(y).astype(np.float64)
        if u.size:
            with np.errstate(invalid="ignore"):
                same_nan = np.isnan(u) & np.isnan(v)
                diff = np.where(same_nan, 0.0, np.abs(u - v))
            worst = max(worst, float(np.nanmax(diff)) if not np.isnan(diff).all() else float("inf"))
            finite = np.abs(u[np.isfinite(u)])
            scale = max(scale, float(finite.max()) if finite.size else 0.0)
    return worst, scale, len(a), ""


def _train_cell(given_train: Any, net: nn.Cell, loss_fn: Any, optimizer: Any, returns_loss: bool) -> Any:
    if isinstance(given_train, nn.TrainOneStepWithLossScaleCell) and ms.get_context("device_target") == "CPU":
        # Its overflow check is an NPU kernel (GPU has its own): it never compiles on CPU, where
        # MindSpore does not support it. The same network and optimizer in a plain step stand in.
        return nn.TrainOneStepCell(given_train.network, given_train.optimizer)
    if isinstance(given_train, nn.TrainOneStepCell):
        return given_train
    if optimizer is None or (loss_fn is None and not returns_loss):
        return None
    return nn.TrainOneStepCell(net if returns_loss else StepLoss(net, loss_fn), optimizer)


def run_in_graph_mode(
    net: nn.Cell,
    inputs: tuple[Any, ...],
    *,
    optimizer: Any = None,
    loss_fn: Any = None,
    label: Any = None,
    returns_loss: bool = False,
    train_cell: Any = None,
    jit_boundaries: bool = False,
) -> GraphModeResult:
    """Compile and compare *net* in GRAPH_MODE (see the module docstring); everything is put back.

    With *jit_boundaries* (a PyNative script that compiles parts of the network with
    ``mindspore.jit``) exactly those parts are compiled, as the user runs them: the network
    runs in PyNative with ``MS_JIT=0`` (all Python) and then as written (what ``jit``
    compiles, compiled), and the training step runs once in PyNative, its ``jit`` parts
    compiled with their gradients; compiling the whole network in GRAPH_MODE would check
    code the user never compiles.
    """
    from graphaudit.capture.compilation.jit import jit_disabled

    how = "jit" if jit_boundaries else "graph-mode"
    train = None
    params = unique(
        [
            *net.get_parameters(),
            *(loss_fn.get_parameters() if isinstance(loss_fn, nn.Cell) else ()),
            *(optimizer_state_parameters(optimizer) if optimizer is not None else ()),
            *(train_cell.get_parameters() if isinstance(train_cell, nn.Cell) else ()),
        ]
    )
    cells = cells_of(net, loss_fn, optimizer, train_cell)
    with LOCK, ExitStack() as stack:
        stack.enter_context(preserved_seed_counters())
        stack.enter_context(preserved(cells, params))  # mode, flags, random states
        stack.enter_context(restored_in_place(params))
        stack.enter_context(fresh_random_primitives(cells))
        stack.enter_context(redirected_dumps())
        stack.enter_context(graphs_not_saved())
        stack.enter_context(registered_modules(cells))
        stack.enter_context(preserved_cell_grad_flags(cells))
        stack.enter_context(preserved_attributes(cells))
        stack.callback(ms.set_context, mode=ms.PYNATIVE_MODE)  # values are written back in PyNative
        with training_flags(net, False):
            if ms.get_context("mode") != ms.PYNATIVE_MODE:
                ms.set_context(mode=ms.PYNATIVE_MODE)
            with jit_disabled():
                expected = net(*_copies(inputs))
                synchronize()
            if not jit_boundaries:
                ms.set_context(mode=ms.GRAPH_MODE)
            try:
                got = net(*_copies(inputs))
                synchronize()
            except Exception as err:
                return GraphModeResult(_failure("the forward pass", err), how=how)
            worst, scale, count, mismatch = _compare(expected, got)
        train = _train_cell(train_cell, net, loss_fn, optimizer, returns_loss)
        if train is not None:
            args = _copies(inputs) if returns_loss or label is None else (*_copies(inputs), label)
            try:
                if jit_boundaries:
                    train(*args)  # one real step, put back by restored_in_place
                    synchronize()
                else:
                    train.compile(*args)
            except Exception as err:
                return GraphModeResult(
                    _failure("the training step", err), worst, scale, count, mismatch, how=how
                )
        return GraphModeResult(None, worst, scale, count, mismatch, train is not None, how)
