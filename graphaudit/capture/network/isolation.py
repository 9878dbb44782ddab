"""Leave the network exactly as it was found.

A traced forward pass runs the user's ``construct``: in training mode BatchNorm updates
its moving statistics, Dropout draws from the random generator, and the capture may have
to switch the global context to PyNative. :func:`preserved` snapshots everything such a
pass can change and puts it back afterwards, on success and on failure alike.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops

try:
    from mindspore.ops.functional import _tensor_move
except ImportError:  # MindSpore 2.7 has no queued copy kernel: values are read at once there
    _tensor_move = None
from mindspore.ops.primitive import Primitive

from graphaudit.capture.network.rng import private_random_state
from graphaudit.capture.network.values import same_bits, tensor_values

__all__ = [
    "Snapshot",
    "copy_counter",
    "device_copy",
    "fresh_random_primitives",
    "preserved",
    "preserved_seed_counters",
    "restore_values",
    "synchronize",
    "tensor_bytes",
    "training_flags",
    "write_in_place",
]

# Attributes that mark a primitive holding random state of its own (ops.Dropout and kin).
RANDOM_PRIMITIVE_ATTRS = ("Seed0", "Seed1", "seed", "seed2", "side_effect_hidden")

# The dtypes TensorMove copies on CPU (checked on MindSpore 2.10: not bfloat16).
_COPY_KERNEL_DTYPES = frozenset(
    (
        *(ms.float16, ms.float32, ms.float64, ms.complex64, ms.complex128, ms.bool_),
        *(ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8, ms.uint16, ms.uint32, ms.uint64),
    )
)


def tensor_bytes(tensor: Tensor) -> np.ndarray:
    """A copy of *tensor*'s values as a NumPy array (bfloat16 widened exactly to float32)."""
    return tensor_values(tensor).copy()


def device_copy(tensor: Tensor) -> Tensor | np.ndarray:
    """A copy of *tensor*'s values, made by a queued kernel: no wait for the kernels before it.

    Reading values (``asnumpy``) waits for every queued PyNative kernel; before each write of
    a pass that stops the pass's kernels overlapping with Python's dispatch (a training-mode
    resnet50 pass ran twice as slowly). The copy kernel runs in queue order, so it sees the
    value before the write queued after it. bfloat16, which the CPU copy kernel lacks, is
    widened exactly to float32 (what :func:`tensor_bytes` gives too); a dtype not known to
    have a copy kernel is read at once. Errors are not caught: one raised here may be a
    queued kernel of the pass failing, which must reach the capture.
    """
    if tensor.dtype == ms.bfloat16:
        return tensor.astype(ms.float32)
    if _tensor_move is not None and tensor.dtype in _COPY_KERNEL_DTYPES:
        return _tensor_move(tensor)
    return tensor_bytes(tensor)


def host_values(saved: Tensor | np.ndarray) -> np.ndarray:
    """The values of what :func:`device_copy` returned, as NumPy (waits for the copy)."""
    return saved if isinstance(saved, np.ndarray) else tensor_values(saved)


def synchronize() -> None:
    """Wait for queued PyNative kernels, so that their errors surface now.

    On CPU some kernels (BCELoss given values outside [0, 1]) fail asynchronously; without
    this the error would surface at the next synchronisation, e.g. inside a state restore.
    """
    executor = getattr(ms.common.api, "_pynative_executor", None)
    sync = getattr(executor, "sync", None)
    if sync is not None:
        sync()


def write_in_place(param: Parameter, value: np.ndarray) -> None:
    """Put *value* into *param*'s own storage (see :func:`restore_values`)."""
    restore_values([(param, value)])


def restore_values(saved: Iterable[tuple[Parameter, np.ndarray]]) -> None:
    """Write back, in place, every parameter whose value is no longer the one *saved*.

    In place, not with ``set_data``: on MindSpore 2.10 in PyNative mode an optimizer (or a
    ``@jit`` train step) that has already run keeps writing into the storage it saw first,
    so after ``set_data`` it silently stops updating the parameter (and ``global_step``).
    The writes are queued together and waited for once, then checked bit for bit.
    """
    changed = [(p, v) for p, v in saved if not same_bits(tensor_values(p), v)]
    written = []
    for param, value in changed:
        tensor = Tensor(value)
        if tensor.dtype != param.dtype:
            tensor = tensor.astype(param.dtype)
        try:
            ops.assign(param, tensor)
        except Exception:
            param.set_data(tensor)  # a parameter assign cannot write (e.g. a lazily initialised one)
        written.append((param, value, tensor))
    if not written:
        return
    try:
        synchronize()
    finally:
        for param, value, tensor in written:
            if not same_bits(tensor_values(param), value):
                param.set_data(tensor)


@contextmanager
def fresh_random_primitives(cells: list[nn.Cell]) -> Iterator[None]:
    """Run with copies of the cells' random primitives; put the originals back afterwards.

    ``ops.Dropout`` (behind ``nn.Dropout``) keeps its random state inside the primitive
    object: each call advances it, and ``mindspore.set_rng_state`` does not reset it. A fresh
    copy starts from the same seeds, so masks are drawn without moving the originals.
    """
    swapped: list[tuple[nn.Cell, str, Primitive, bool]] = []
    try:
        for cell in cells:
            primitives = getattr(cell, "_primitives", {})
            for name, value in list(vars(cell).items()):
                if isinstance(value, Primitive) and any(a in value.attrs for a in RANDOM_PRIMITIVE_ATTRS):
                    in_table = primitives.get(name) is value
                    twin = copy.deepcopy(value)
                    swapped.append((cell, name, value, in_table))
                    object.__setattr__(cell, name, twin)
                    if in_table:
                        primitives[name] = twin
        yield
    finally:
        for cell, name, original, in_table in reversed(swapped):
            object.__setattr__(cell, name, original)
            if in_table:
                cell._primitives[name] = original


@contextmanager
def training_flags(net: nn.Cell, mode: bool) -> Iterator[None]:
    """Run with *net* set to training *mode* (``set_train``); every cell's flag put back on exit."""
    cells = [cell for _, cell in net.cells_and_names()]
    saved = [(cell, bool(cell.training), getattr(cell, "_phase", None)) for cell in cells]
    recorded = [(cell, dict(getattr(cell, "_func_graph_flags", None) or {})) for cell in cells]
    try:
        net.set_train(mode)
        yield
    finally:
        for cell, training, phase in saved:
            if cell.training != training:
                cell.add_flags(training=training)
            if getattr(cell, "_phase", phase) != phase:
                cell._phase = phase
        for cell, flags in recorded:  # set_train records the flag; a cell never set keeps none
            current = getattr(cell, "_func_graph_flags", None)
            if isinstance(current, dict) and current != flags:
                current.clear()
                current.update(flags)


@contextmanager
def preserved_seed_counters() -> Iterator[None]:
    """Draw random numbers from private copies of the random states, for this thread only.

    MindSpore's per-operation seed counters (``ops.dropout(x)`` advances them), its default
    generator, ``numpy.random`` and ``random`` are process-wide: saving and setting them back
    would rewind the draws other threads made meanwhile (:mod:`graphaudit.capture.network.rng`).
    """
    with private_random_state():
        yield


def copy_counter() -> Parameter:
    """The counter of :attr:`Snapshot.copies_done` (made before a pass: making it synchronises)."""
    return Parameter(Tensor(np.zeros((), np.int64)), name="graphaudit_copies_done", requires_grad=False)


@dataclass
class Snapshot:
    """What a forward pass may change, saved before it runs."""

    cells: list[nn.Cell]
    parameters: list[Parameter]
    mode: int = 0
    training: list[tuple[bool, Any]] = field(default_factory=list)
    requires_grad: list[bool] = field(default_factory=list)
    names: list[tuple[str, bool]] = field(default_factory=list)
    values: dict[int, tuple[Parameter, Tensor | np.ndarray]] = field(default_factory=dict)

    copies_done: Parameter | None = None

    def save_parameter(self, param: Parameter) -> None:
        """Save *param*'s value, once, before something may write into it.

        A device-side copy (:func:`device_copy`): called before writes in the middle of a
        pass, it must not wait for the pass's queued kernels; compared and written back once,
        after the pass (:meth:`restore`). Each copy is followed by a queued count of the
        copies made so far (:attr:`copies_done`): a kernel that fails asynchronously drops
        every kernel queued after it, so a copy counted is one that ran, and a copy not
        counted holds no value (nor did the write queued after it run).
        """
        if id(param) in self.values or param is self.copies_done:
            return
        saved = device_copy(param)
        self.values[id(param)] = (param, saved)
        if isinstance(saved, Tensor):
            if self.copies_done is None:
                self.copies_done = copy_counter()
            ops.assign(self.copies_done, Tensor(len(self.values), ms.int64))

    def save_now(self, params: Iterable[Parameter]) -> None:
        """Save each of *params*' values, once, before the pass that may write them is queued.

        Read at once to host memory: before a pass there is no kernel of it to wait for, and a
        queued copy and count (:meth:`save_parameter`) cost ~1 ms a parameter here, forty
        times a host read (the BatchNorm statistics of a resnet18: 40 ms, most of a forward
        pass of a small batch).
        """
        for param in params:
            if id(param) not in self.values and param is not self.copies_done:
                self.values[id(param)] = (param, tensor_bytes(param))

    def _saved_values(self) -> Iterator[tuple[Parameter, np.ndarray]]:
        """The saved values that are real: the copies that ran (see :meth:`save_parameter`)."""
        done = 0 if self.copies_done is None else int(self.copies_done.asnumpy())
        for position, (param, saved) in enumerate(self.values.values(), start=1):
            if isinstance(saved, np.ndarray) or position <= done:
                yield param, host_values(saved)

    def restore(self) -> None:
        """Put everything back; every step runs even if an earlier one fails."""
        errors: list[BaseException] = []
        for step in (self._restore_context, self._restore_flags, self._restore_values):
            try:
                step()
            except Exception as err:  # keep restoring the rest, report the first failure
                errors.append(err)
        if errors:
            raise errors[0]

    def _restore_context(self) -> None:
        if ms.get_context("mode") != self.mode:
            ms.set_context(mode=self.mode)

    def _restore_flags(self) -> None:
        for cell, (training, phase) in zip(self.cells, self.training):
            if cell.training != training:
                cell.add_flags(training=training)  # what set_train does, without recursing
            if getattr(cell, "_phase", phase) != phase:
                cell._phase = phase
        for param, requires_grad in zip(self.parameters, self.requires_grad):
            if param.requires_grad != requires_grad:
                param.requires_grad = requires_grad
        # The user's construct may rename parameters: slicing a CellList (``self.layers[:n]``,
        # 40 mindone.transformers models) builds a new CellList whose auto-prefix renames
        # every sliced layer's parameters (``model.layers.0.w`` -> ``0.w``) and clears their
        # ``is_init``. Run by the audit, that would change what checkpoints save and load.
        for param, (name, is_init) in zip(self.parameters, self.names):
            if param.name != name:
                param.name = name
            if getattr(param, "is_init", is_init) != is_init:
                param.is_init = is_init

    def _restore_values(self) -> None:
        restore_values(self._saved_values())


@contextmanager
def preserved(cells: list[nn.Cell], parameters: list[Parameter]) -> Iterator[Snapshot]:
    """Snapshot mode, flags, buffers and random state; restore them on exit.

    Nothing is copied up front that a forward pass cannot change (a copy of every weight
    would double the memory of a large model): only the buffers (``requires_grad=False``)
    of cells in training mode — BatchNorm's moving statistics. Anything else a pass writes
    goes through an assign-like operation or a primitive that writes its inputs, which the
    tracer reports to :meth:`Snapshot.save_parameter` before it runs.
    """
    snapshot = Snapshot(
        cells=cells,
        parameters=parameters,
        mode=ms.get_context("mode"),
        training=[(bool(c.training), getattr(c, "_phase", None)) for c in cells],
        requires_grad=[bool(p.requires_grad) for p in parameters],
        names=[(p.name, bool(getattr(p, "is_init", False))) for p in parameters],
        copies_done=copy_counter(),
    )
    snapshot.save_now(
        param
        for cell in cells
        if cell.training
        for param in cell._params.values()
        if param is not None and not param.requires_grad
    )
    with ExitStack() as stack:
        stack.enter_context(preserved_seed_counters())
        stack.enter_context(fresh_random_primitives(cells))
        try:
            yield snapshot
        finally:
            try:
                synchronize()  # queued kernels of a failed pass must not fail the restore
            finally:
                snapshot.restore()
