"""Where a non-finite loss came from: re-run the step's batch with a forward hook on every cell.

Only when the loss first stops being finite (GA950), never on a normal step. The batch
that step trained on is run once more through the network, with the weights the step's
forward pass saw (the update that followed may already have spread NaN into every weight),
inside :func:`graphaudit.capture.network.isolation.preserved`: the weights written for the re-run,
BatchNorm's statistics, Dropout's and the global random state, the training flags and the
context are all put back afterwards, bit for bit. The first cell (in the order cells
return, i.e. innermost first) whose output holds a NaN or Inf is the layer, its output the
tensor.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor, nn, ops
    >>> class Exp(nn.Cell):
    ...     def construct(self, x):
    ...         return ops.exp(x)
    >>> net = nn.SequentialCell([nn.Dense(2, 2, weight_init="ones"), Exp(), nn.Dense(2, 1)])
    >>> found = locate(net, (Tensor(np.full((1, 2), 1e4, np.float32)),))
    >>> found.cell, found.tensor.split(":")[0]
    ('1', 'output of shape (1, 2)')
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn

from graphaudit.capture.compilation.jit import jit_disabled
from graphaudit.capture.network.isolation import preserved, restore_values
from graphaudit.capture.network.values import tensor_values

__all__ = ["Located", "isolated", "locate"]


@dataclass(frozen=True)
class Located:
    """The first cell whose output was not finite (``""`` is the root), and that output described."""

    cell: str
    tensor: str


def _tensors(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    return []


def _bad(tensor: Tensor) -> str | None:
    """``None`` when every value is finite, else what is wrong with it."""
    values = np.asarray(tensor_values(tensor))
    if values.dtype.kind not in "fc" or np.all(np.isfinite(values)):
        return None
    nans, total = int(np.isnan(values).sum()), values.size
    infs = int(np.isinf(values).sum())
    return f"{nans} NaN and {infs} Inf of its {total} values"


def _describe(value: Any) -> str | None:
    tensors = _tensors(value)
    for index, tensor in enumerate(tensors):
        bad = _bad(tensor)
        if bad is not None:
            which = "output" if len(tensors) == 1 else f"output {index}"
            return f"{which} of shape {tuple(tensor.shape)}: {bad}"
    return None


def locate(
    net: nn.Cell, inputs: Sequence[Any], weights: Sequence[tuple[Parameter, np.ndarray]] = ()
) -> Located | None:
    """Run *net* on *inputs* (with *weights* written in for the run) and find the first non-finite output.

    ``None`` when every cell's output was finite. Nothing is changed: see the module docstring.
    """
    given = _describe(tuple(inputs))
    if given is not None:
        return Located("(the batch)", given.replace("output", "input", 1))
    named = list(net.cells_and_names())
    found: list[Located] = []
    handles = []
    with isolated(net, weights):
        for name, cell in named:

            def hook(_cell: Any, _args: Any, output: Any, name: str = name) -> None:
                if not found:
                    bad = _describe(output)
                    if bad is not None:
                        found.append(Located(name, bad))

            handles.append(cell.register_forward_hook(hook))
        try:
            net(*inputs)
        finally:
            for handle in handles:
                handle.remove()
    return found[0] if found else None


@contextmanager
def isolated(net: nn.Cell, weights: Sequence[tuple[Parameter, np.ndarray]] = ()) -> Iterator[None]:
    """Run *net* as plain Python in PyNative (with *weights* written in), then put everything back.

    What a watch's own forward pass needs: hooks fire (``@jit`` code runs as Python), and the
    weights, BatchNorm's statistics, the random states, the flags and the context are put
    back bit for bit afterwards (:func:`~graphaudit.capture.network.isolation.preserved`).
    """
    cells = [cell for _, cell in net.cells_and_names()]
    with preserved(cells, list(net.get_parameters())) as snapshot:
        if ms.get_context("mode") != ms.PYNATIVE_MODE:
            ms.set_context(mode=ms.PYNATIVE_MODE)  # forward hooks run in PyNative; the snapshot restores it
        for param, _ in weights:
            snapshot.save_parameter(param)
        restore_values(weights)
        with jit_disabled():  # compiled code runs as Python, so the hooks inside it fire
            yield
