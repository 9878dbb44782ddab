"""Leave the network exactly as it was found.

A traced forward pass runs the user's ``construct``: in training mode BatchNorm updates
its moving statistics, Dropout draws from the random generator, and the capture may have
to switch the global context to PyNative. :func:`preserved` snapshots everything such a
pass can change and puts it back afterwards, on success and on failure alike.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops
from mindspore.ops.primitive import Primitive

from graphaudit.capture.network.rng import private_random_state
from graphaudit.capture.network.values import same_bits, tensor_values

__all__ = [
    "Snapshot",
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
# A set: every attribute of every cell is looked at each capture (~11,500 for resnet50).
RANDOM_PRIMITIVE_ATTRS = frozenset({"Seed0", "Seed1", "seed", "seed2", "side_effect_hidden"})


def tensor_bytes(tensor: Tensor) -> np.ndarray:
    """A copy of *tensor*'s values as a NumPy array (bfloat16 widened exactly to float32)."""
    return tensor_values(tensor).copy()


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
    ``Tensor.copy_`` writes that storage (MindSpore 2.7 and later) at a quarter of the cost of
    ``ops.assign`` (106 BatchNorm statistics of resnet50: 3.0 ms against 12.8 ms), which
    remains for a parameter ``copy_`` refuses. The writes are queued together and waited for
    once, then checked bit for bit.
    """
    changed = [(p, v) for p, v in saved if not same_bits(tensor_values(p), v)]
    written = []
    for param, value in changed:
        tensor = Tensor(value)
        if tensor.dtype != param.dtype:
            tensor = tensor.astype(param.dtype)
        try:
            param.copy_(tensor)
        except Exception:
            try:
                ops.assign(param, tensor)
            except Exception:
                param.set_data(tensor)  # nothing writes it in place (e.g. a lazily initialised one)
        written.append((param, value, tensor))
    if not written:
        return
    try:
        synchronize()
    finally:
        for param, value, tensor in written:
            if not same_bits(tensor_values(param), value):
                param.set_data(tensor)


@functools.cache
def _numpy_dtype(dtype: Any) -> Any:
    try:
        return np.dtype(ms.dtype_to_nptype(dtype))
    except Exception:  # bfloat16 and other types NumPy lacks
        return None


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
            random = [
                (name, value)
                for name, value in vars(cell).items()
                if isinstance(value, Primitive) and not RANDOM_PRIMITIVE_ATTRS.isdisjoint(value.attrs)
            ]
            for name, value in random:
                primitives = getattr(cell, "_primitives", {})
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


@dataclass
class Snapshot:
    """What a forward pass may change, saved before it runs."""

    cells: list[nn.Cell]
    parameters: list[Parameter]
    mode: int = 0
    training: list[tuple[bool, Any]] = field(default_factory=list)
    requires_grad: list[bool] = field(default_factory=list)
    names: list[tuple[str, bool]] = field(default_factory=list)
    values: dict[int, tuple[Parameter, np.ndarray]] = field(default_factory=dict)

    def save_parameter(self, param: Parameter) -> None:
        """Save *param*'s value, once, before an operation of the pass writes into it.

        Waits for the pass's queued kernels, then reads to host memory: the wait is what makes
        the save sound. A kernel that fails asynchronously (BCELoss given -1 on CPU) drops
        the kernels queued while it fails, yet runs those queued after: a queued copy could
        be dropped while the write after it ran (seen 5-7 times in 40 under load), leaving a
        value changed and none saved. The wait raises such a failure here, before the write
        is queued. Measured on a traced resnet18 train step (every weight written mid-pass):
        1.70x a plain step, against 1.84x with queued copies (docs/performance.md, stop 49).
        """
        if id(param) not in self.values:
            synchronize()
            self.save_now((param,))

    def stand_in(self, param: Parameter) -> Tensor | None:
        """A fresh tensor holding *param*'s saved value, for a kernel to write instead of *param*.

        ``None`` when *param* is not saved, or saved widened (bfloat16). The tracer hands it to
        a BatchNorm in place of its moving statistics (:data:`~graphaudit.capture.network.
        wrappers.WRITTEN_INPUTS`): a training-mode BatchNorm normalises with the batch's own
        statistics and only writes the moving ones, so its outputs are unchanged, and the
        network's statistics are never written. Putting 106 written statistics back cost
        resnet50's audit ~10 ms (a read of each just-written tensor waits on its kernel, then
        the writes and their check); a stand-in costs ~2 us. The restore still compares them.
        What the traced pass cannot show: code that reads the moving statistics later in the
        same pass sees them as they were before it.
        """
        saved = self.values.get(id(param))
        if saved is None or saved[1].dtype != _numpy_dtype(param.dtype):
            return None
        # A tensor over a copy of the saved array (the kernel writes the copy): ~2 us, Tensor(array) ~10 us.
        return Tensor.from_numpy(saved[1].copy())

    def save_now(self, params: Iterable[Parameter]) -> None:
        """Save each of *params*' values, once, as a host copy."""
        for param in params:
            if id(param) not in self.values:
                self.values[id(param)] = (param, tensor_bytes(param))

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
        restore_values(self.values.values())


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
