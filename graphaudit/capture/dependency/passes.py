"""The dependency probe's passes: the network run on a variant of the batch, every cell call recorded.

:class:`Runner` runs the network on the arrays of a variant (the batch's own dtypes kept),
with forward hooks on every cell (:func:`hooked`, removed on exit, the cells' attributes put
back) recording each call in the order the calls return (its input and output tensors, or only
what the probe will read: :class:`Recorder`), and keeps
what the judged cell returned: the network's output when it holds a tensor per sample, else
the outermost cell's that does. :func:`relative`, :func:`first_moving` and :func:`entry` read
two recorded passes. :mod:`graphaudit.capture.dependency.probe` decides what they show.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor, nn
    >>> from graphaudit.capture.dependency.plan import Plan
    >>> net = nn.SequentialCell([nn.Dense(3, 3), nn.ReLU()])
    >>> x = np.ones((2, 3), np.float32)
    >>> with hooked(dict(net.cells_and_names())) as recorder:
    ...     outputs, calls = Runner(net, (Tensor(x),), recorder, Plan.of([x], sequence=False)).run([x])
    >>> [call.path for call in calls], outputs[0].shape
    (['0', '1', ''], (2, 3))
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from mindspore import Tensor, nn

from graphaudit.capture.compilation.graph_mode import preserved_attributes
from graphaudit.capture.dependency.plan import (
    Plan,
    Region,
    moved,
    reversed_batch,
    samples_first,
    time_major_shape,
)
from graphaudit.capture.network.isolation import synchronize
from graphaudit.capture.network.recorder import flatten_tensors
from graphaudit.capture.network.values import tensor_values

__all__ = ["Call", "Recorder", "Runner", "entry", "first_moving", "hooked", "relative"]


@dataclass
class Call:
    path: str
    inputs: list[Tensor]
    outputs: list[Tensor]
    reversed: int = 0  # the batch size when the pass ran on the samples in reverse order (0: as given)
    time_major: int = 0  # the batch size when (T, B, ...) tensors are read batch first (Plan.time_major)

    def values(self, which: str) -> list[np.ndarray]:
        """The call's ``"inputs"`` or ``"outputs"`` as arrays, each with its samples in the order given.

        In a time-major network a ``(T, B, ...)`` tensor is read batch first (:func:`samples_first`).

        A pass on the reversed batch is read back through axis 0 where that axis has one row
        per sample: a tensor laid out otherwise (``(B*T, C)``, ``(B*H, T, T)``) reads as moved,
        which can only make a cell look like the first to move earlier than it is.
        """
        arrays = [samples_first(_numpy(t), self.time_major) for t in getattr(self, which)]
        return [reversed_batch(a, self.reversed) for a in arrays] if self.reversed else arrays


class Recorder:
    """Forward hooks on every cell recording each call's tensors, in the order the calls return.

    What a call keeps is the runner's choice (:attr:`keeping`): ``"all"`` its inputs and
    outputs (what :func:`entry` reads); ``"judged"`` the outputs of calls of :attr:`judged`
    only; ``"candidate"`` the outputs of the first call of the shallowest cell whose output
    holds a tensor per sample (:attr:`comparable`), the one :class:`Runner` would judge. Every
    tensor a call keeps stays alive until the pass is read: kept for every call, that is the
    whole pass's activations (a CaiT-M48 at 448x448: gigabytes) where a forward pass keeps one
    layer's.
    """

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.keeping = "all"
        self.judged: str | None = None
        self.comparable: Any = None  # (tensors) -> bool, for "candidate"
        self._best: tuple[int, int] | None = None  # (depth, index) of the candidate kept

    def start(self, keeping: str, judged: str | None, comparable: Any) -> None:
        """Begin a pass: no calls yet, keeping what *keeping* says (see the class)."""
        self.calls, self.keeping, self.judged, self.comparable, self._best = (
            [],
            keeping,
            judged,
            comparable,
            None,
        )

    def hook(self, path: str) -> Any:
        depth = path.count(".") if path else -1

        def record(cell: nn.Cell, args: tuple[Any, ...], kwargs: dict[str, Any], output: Any) -> None:
            if self.keeping == "all":
                self.calls.append(Call(path, flatten_tensors((args, kwargs)), flatten_tensors(output)))
            elif self.keeping == "judged":
                self.calls.append(Call(path, [], flatten_tensors(output) if path == self.judged else []))
            else:
                self.calls.append(Call(path, [], []))
                if self._best is not None and self._best[0] <= depth:
                    return  # a shallower cell's output (or an earlier one as shallow) is kept already
                outputs = flatten_tensors(output)
                if self.comparable(outputs):
                    if self._best is not None:
                        self.calls[self._best[1]].outputs = []
                    self._best = (depth, len(self.calls) - 1)
                    self.calls[-1].outputs = outputs

        return record


@contextmanager
def hooked(cells: dict[str, nn.Cell]) -> Iterator[Recorder]:
    recorder = Recorder()
    handles = []
    with preserved_attributes(list(cells.values())):
        try:
            for path, cell in cells.items():
                handles.append(cell.register_forward_hook(recorder.hook(path), with_kwargs=True))
            yield recorder
        finally:
            for handle in handles:
                handle.remove()


def _numpy(tensor: Tensor) -> np.ndarray:
    return tensor_values(tensor)


class Runner:
    """Runs the network on a variant of the batch and keeps what the judged cell returned."""

    def __init__(self, net: nn.Cell, inputs: tuple[Any, ...], recorder: Recorder, plan: Plan) -> None:
        self.net, self.inputs, self.recorder, self.plan = net, inputs, recorder, plan
        self.passes = 0
        self.dtypes: list[str] = []
        self.judged: tuple[str, int] | None = None  # (path, occurrence); None: the network's output
        self.only: tuple[int, ...] | None = None  # the judged tensors read (None: all): the causal stack's
        self.first: list[
            np.ndarray
        ] = []  # the first pass's judged outputs (a reversed pass is read against them)

    def run(
        self, arrays: list[np.ndarray | None], keeping: str = "all", reverse: bool = False
    ) -> tuple[list[np.ndarray], list[Call]]:
        """Run the network on *arrays*; the calls keep what *keeping* says (:class:`Recorder`).

        *reverse*: run it on the samples in the opposite order (every input with one row per
        sample), and read the outputs and calls back in the order given (:meth:`Call.values`).
        """
        batch = self.plan.batch
        if reverse:
            arrays = [None if a is None else reversed_batch(a, batch) for a in arrays]
        args = []
        for given, values in zip(self.inputs, arrays):
            if isinstance(given, Tensor) and values is not None:
                tensor = Tensor(values)
                args.append(tensor if tensor.dtype == given.dtype else tensor.astype(given.dtype))
            else:
                args.append(given)
        self.recorder.start(keeping, None if self.judged is None else self.judged[0], self._comparable)
        output = self.net(*args)
        synchronize()
        self.passes += 1
        calls = self.recorder.calls
        for call in calls:
            call.reversed, call.time_major = (batch if reverse else 0), self._time_major
        if self.passes == 1:
            self.judged = self._choose(output, calls)
        tensors = self._judged_tensors(output, calls)
        if self.only is not None:
            tensors = [tensors[i] for i in self.only if i < len(tensors)]
        self.dtypes = [str(t.dtype).lower() for t in tensors]
        values = [samples_first(_numpy(t), self._time_major) for t in tensors]
        if self.passes == 1:
            self.first = values
        return [self._read_back(i, v) for i, v in enumerate(values)] if reverse else values, calls

    def _read_back(self, index: int, values: np.ndarray) -> np.ndarray:
        """A judged output of a reversed pass, its samples in the order given.

        A ``(B, B)`` output is a similarity matrix (both axes are samples) or a ``(B, C)`` one
        with ``C == B`` (a batch of 2, two classes): the reading closer to the first pass's is
        taken, the other differs nearly everywhere. Closer first where the samples the
        combined pass leaves as given meet (the block before the last sample, which it changes:
        over the whole array, a changed sample far from its first output could outweigh a
        wrong reading of the others), then over the whole array when that block cannot tell.
        """
        batch, first = self.plan.batch, self.first
        rows = reversed_batch(values, batch)
        if values.ndim < 2 or values.shape[:2] != (batch, batch) or index >= len(first):
            return rows
        both = reversed_batch(values, batch, pairs=True)
        if first[index].shape != values.shape:
            return both
        given = slice(0, batch - 1)
        for block in ((given, given), (slice(None),)):
            rows_off, both_off = (
                float(np.nansum(np.abs(r[block].astype(np.float64) - first[index][block])))
                for r in (rows, both)
            )
            if rows_off != both_off:
                return both if both_off < rows_off else rows
        return both

    @property
    def _time_major(self) -> int:
        return self.plan.batch if self.plan.time_major else 0

    def _comparable(self, tensors: list[Tensor]) -> bool:
        length = self.plan.length
        shapes = [tuple(t.shape) for t in tensors]
        shapes = [(s[1], s[0], *s[2:]) if time_major_shape(s, self._time_major) else s for s in shapes]
        return any(
            len(shape) >= 1
            and shape[0] == self.plan.batch
            and (not length or any(d == length for d in shape[1:]))
            for shape in shapes
        )

    def _choose(self, output: Any, calls: list[Call]) -> tuple[str, int] | None:
        if self._comparable(flatten_tensors(output)):
            return None
        candidates = [(call.path.count(".") if call.path else -1, i) for i, call in enumerate(calls)]
        ordered = sorted(c for c in candidates if self._comparable(calls[c[1]].outputs))
        if not ordered:
            raise ValueError(
                "neither the network's output nor any cell's holds a tensor per sample of the batch"
                + (f" and per position of the sequence ({self.plan.length})" if self.plan.length else "")
            )
        path = calls[ordered[0][1]].path
        return path, sum(1 for call in calls[: ordered[0][1]] if call.path == path)

    def _judged_tensors(self, output: Any, calls: list[Call]) -> list[Tensor]:
        if self.judged is None:
            return flatten_tensors(output)
        path, occurrence = self.judged
        mine = [call for call in calls if call.path == path]
        return mine[occurrence].outputs if occurrence < len(mine) else []

    @property
    def judged_path(self) -> str:
        return "" if self.judged is None else self.judged[0]


def relative(before: list[np.ndarray], after: list[np.ndarray], regions: list[Region], length: int) -> float:
    """The largest change over *regions*, relative to each output's largest value."""
    worst = 0.0
    for a, b in zip(before, after):
        for region in regions:
            measured = moved(a, b, region, length)
            if measured is None:
                continue
            change, scale = measured
            if change > 0:
                worst = max(worst, change / scale if scale > 0 else float("inf"))
    return worst


def first_moving(
    base: list[Call], other: list[Call], regions: list[Region], length: int, tolerance: float
) -> int | None:
    """The index of the first call, in the order calls return, whose output moves in *regions*."""
    for index, (before, after) in enumerate(zip(base, other)):
        if before.path != after.path:
            return None  # another call sequence: the cells cannot be matched
        if relative(before.values("outputs"), after.values("outputs"), regions, length) > tolerance:
            return index
    return None


def entry(
    base: list[Call], other: list[Call], regions: list[Region], length: int, tolerance: float
) -> str | None:
    """The first call, in the order calls return, whose output moves while none of its inputs does."""
    start = first_moving(base, other, regions, length, tolerance)
    if start is None:
        return None
    for before, after in zip(base[start:], other[start:]):
        if before.path != after.path:
            return None
        if relative(before.values("outputs"), after.values("outputs"), regions, length) <= tolerance:
            continue
        if relative(before.values("inputs"), after.values("inputs"), regions, length) <= tolerance:
            return before.path
    return None
