"""Leave the network exactly as it was found.

A traced forward pass runs the user's ``construct``: in training mode BatchNorm updates
its moving statistics, Dropout draws from the random generator, and the capture may have
to switch the global context to PyNative. :func:`preserved` snapshots everything such a
pass can change and puts it back afterwards, on success and on failure alike.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn

__all__ = ["Snapshot", "preserved"]


def _tensor_bytes(tensor: Tensor) -> np.ndarray:
    if tensor.dtype == ms.bfloat16:  # numpy has no bfloat16; float32 holds it exactly
        return tensor.astype(ms.float32).asnumpy().copy()
    return tensor.asnumpy().copy()


@dataclass
class Snapshot:
    """What a forward pass may change, saved before it runs."""

    cells: list[nn.Cell]
    parameters: list[Parameter]
    mode: int = 0
    training: list[tuple[bool, Any]] = field(default_factory=list)
    requires_grad: list[bool] = field(default_factory=list)
    values: dict[int, tuple[Parameter, np.ndarray]] = field(default_factory=dict)
    ms_rng: np.ndarray | None = None
    np_rng: Any = None
    py_rng: Any = None

    def save_parameter(self, param: Parameter) -> None:
        """Save *param*'s value, once, before something may write into it."""
        if id(param) not in self.values:
            self.values[id(param)] = (param, _tensor_bytes(param))

    def restore(self) -> None:
        """Put everything back; every step runs even if an earlier one fails."""
        errors: list[BaseException] = []
        for step in (self._restore_context, self._restore_flags, self._restore_values, self._restore_random):
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

    def _restore_values(self) -> None:
        for param, saved in self.values.values():
            now = _tensor_bytes(param)
            if now.tobytes() != saved.tobytes():
                restored = Tensor(saved)
                param.set_data(restored.astype(param.dtype) if param.dtype != restored.dtype else restored)

    def _restore_random(self) -> None:
        if self.ms_rng is not None:
            ms.set_rng_state(Tensor(self.ms_rng))
        np.random.set_state(self.np_rng)
        random.setstate(self.py_rng)


@contextmanager
def preserved(cells: list[nn.Cell], parameters: list[Parameter]) -> Iterator[Snapshot]:
    """Snapshot mode, flags, buffers and random state; restore them on exit.

    Trainable parameters are not copied up front (that would double the memory of a large
    model): a forward pass does not write them, except through assign-like operations,
    which the tracer reports to :meth:`Snapshot.save_parameter` before they run.
    """
    snapshot = Snapshot(
        cells=cells,
        parameters=parameters,
        mode=ms.get_context("mode"),
        training=[(bool(c.training), getattr(c, "_phase", None)) for c in cells],
        requires_grad=[bool(p.requires_grad) for p in parameters],
        ms_rng=ms.get_rng_state().asnumpy().copy(),
        np_rng=np.random.get_state(),
        py_rng=random.getstate(),
    )
    for param in parameters:
        if not param.requires_grad:
            snapshot.save_parameter(param)
    try:
        yield snapshot
    finally:
        snapshot.restore()
