"""The dependency probe: what an output depends on, found by running the network on changed batches.

:func:`probe_dependencies` runs the network in inference mode (``set_train(False)``: no
Dropout, BatchNorm on its moving statistics, so that nothing mixes samples legitimately)
on the batch given and on variants of it (:mod:`graphaudit.capture.dependency_plan`):

1. the batch as given (the baseline);
2. one combined variant: the last sample changed (its positions before the cut rolled by one
   for a sequence model, every value otherwise), the future of the other samples changed
   (sequence probes), the padded positions of sample 0 changed (padding probe).

On a sound network the outputs of the other samples at their past and real positions are
then bit for bit those of the baseline (every cross-dependency is exact zero: a masked score
underflows to zero in ``softmax``), and two passes are all it costs. When something moved, the
causes are told apart by one variant each (the last sample only, sample 0's future only, its
pads only), the run-to-run noise is measured by running the baseline again, and the first cell
(in the order cells return) whose output moves while its inputs do not is where the dependency
enters: every cell's inputs and outputs are recorded with forward hooks, removed afterwards.

Everything is put back (:mod:`graphaudit.capture.isolation`): parameters, buffers, training
flags, the context mode, random states; the hooks are removed and the cells' attributes checked.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor, nn
    >>> net = nn.Dense(3, 2)
    >>> result = probe_dependencies(net, (Tensor(np.ones((2, 3), np.float32)),), {"": net})
    >>> result.results["batch"].found, result.passes
    (False, 2)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

from graphaudit.capture.dependency_plan import Change, Plan, Region, moved
from graphaudit.capture.graph_mode import preserved_attributes
from graphaudit.capture.isolation import preserved, synchronize, training_flags
from graphaudit.capture.optimizer import unique
from graphaudit.capture.trace import flatten_tensors
from graphaudit.capture.values import tensor_values

__all__ = ["Dependence", "DependencyResult", "probe_dependencies"]

#: The tolerance, relative to an output's largest value: this many times the run-to-run noise
#: of the same pass, and at least this many units in the last place of the output's dtype.
NOISE_FACTOR = 4.0
ULP_FACTOR = 8.0


@dataclass(frozen=True)
class Dependence:
    """One probe's outcome: ``change`` where nothing may move (relative to the output's scale)."""

    probe: str  # "batch", "future", "positions" or "padding"
    found: bool
    change: float
    tolerance: float
    judged: str  # the cell path whose output was judged ("" for the network)
    entry: str | None = None  # the first cell whose output moves while its inputs do not
    effect: float = 0.0  # how much the change moved the outputs it may move (relative)


@dataclass(frozen=True)
class DependencyResult:
    """What the probe found: the probes that ran, and why the others did not."""

    results: dict[str, Dependence]
    not_run: dict[str, str] = field(default_factory=dict)
    passes: int = 0
    noise: float | None = None  # relative run-to-run noise, when it was measured
    dtype: str = ""
    batch: int = 0
    length: int = 0
    cut: int = 0
    pads: tuple[int, ...] = ()
    padded_by_probe: bool = False


@dataclass
class _Call:
    path: str
    inputs: list[Tensor]
    outputs: list[Tensor]


class _Recorder:
    """Forward hooks on every cell recording each call's tensors, in the order the calls return."""

    def __init__(self) -> None:
        self.calls: list[_Call] = []

    def hook(self, path: str) -> Any:
        def record(cell: nn.Cell, args: tuple[Any, ...], kwargs: dict[str, Any], output: Any) -> None:
            self.calls.append(_Call(path, flatten_tensors((args, kwargs)), flatten_tensors(output)))

        return record


@contextmanager
def _hooked(cells: dict[str, nn.Cell]) -> Iterator[_Recorder]:
    recorder = _Recorder()
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


class _Runner:
    """Runs the network on a variant of the batch and keeps what the judged cell returned."""

    def __init__(self, net: nn.Cell, inputs: tuple[Any, ...], recorder: _Recorder, plan: Plan) -> None:
        self.net, self.inputs, self.recorder, self.plan = net, inputs, recorder, plan
        self.passes = 0
        self.dtypes: list[str] = []
        self.judged: tuple[str, int] | None = None  # (path, occurrence); None: the network's output

    def run(self, arrays: list[np.ndarray | None]) -> tuple[list[np.ndarray], list[_Call]]:
        args = []
        for given, values in zip(self.inputs, arrays):
            if isinstance(given, Tensor) and values is not None:
                tensor = Tensor(values)
                args.append(tensor if tensor.dtype == given.dtype else tensor.astype(given.dtype))
            else:
                args.append(given)
        self.recorder.calls = []
        output = self.net(*args)
        synchronize()
        self.passes += 1
        calls = self.recorder.calls
        if self.passes == 1:
            self.judged = self._choose(output, calls)
        tensors = self._judged_tensors(output, calls)
        self.dtypes = [str(t.dtype).lower() for t in tensors]
        return [_numpy(t) for t in tensors], calls

    def _comparable(self, tensors: list[Tensor]) -> bool:
        length = self.plan.length
        return any(
            len(t.shape) >= 1
            and t.shape[0] == self.plan.batch
            and (not length or any(d == length for d in t.shape[1:]))
            for t in tensors
        )

    def _choose(self, output: Any, calls: list[_Call]) -> tuple[str, int] | None:
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

    def _judged_tensors(self, output: Any, calls: list[_Call]) -> list[Tensor]:
        if self.judged is None:
            return flatten_tensors(output)
        path, occurrence = self.judged
        mine = [call for call in calls if call.path == path]
        return mine[occurrence].outputs if occurrence < len(mine) else []

    @property
    def judged_path(self) -> str:
        return "" if self.judged is None else self.judged[0]


def _relative(before: list[np.ndarray], after: list[np.ndarray], regions: list[Region], length: int) -> float:
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


#: The unit in the last place (relative) of each floating dtype an output may have.
_EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}


def _ulp(dtypes: list[str]) -> float:
    """The coarsest precision among the outputs' dtypes (float32's when none is a float)."""
    return max((_EPS[d] for d in dtypes if d in _EPS), default=_EPS["float32"])


def _first_moving(
    base: list[_Call], other: list[_Call], regions: list[Region], length: int, tolerance: float
) -> int | None:
    """The index of the first call, in the order calls return, whose output moves in *regions*."""
    for index, (before, after) in enumerate(zip(base, other)):
        if before.path != after.path:
            return None  # another call sequence: the cells cannot be matched
        outputs = _relative(
            [_numpy(t) for t in before.outputs], [_numpy(t) for t in after.outputs], regions, length
        )
        if outputs > tolerance:
            return index
    return None


def _entry(
    base: list[_Call], other: list[_Call], regions: list[Region], length: int, tolerance: float
) -> str | None:
    """The first call, in the order calls return, whose output moves while none of its inputs does."""
    start = _first_moving(base, other, regions, length, tolerance)
    if start is None:
        return None
    for before, after in zip(base[start:], other[start:]):
        if before.path != after.path:
            return None
        outputs = _relative(
            [_numpy(t) for t in before.outputs], [_numpy(t) for t in after.outputs], regions, length
        )
        if outputs <= tolerance:
            continue
        inputs = _relative(
            [_numpy(t) for t in before.inputs], [_numpy(t) for t in after.inputs], regions, length
        )
        if inputs <= tolerance:
            return before.path
    return None


def _regions(plan: Plan, samples: range | list[int], past: bool) -> list[Region]:
    """Where the other samples must not move: their past (sequence probes), sample 0's real positions."""
    regions = []
    for sample in samples:
        positions: list[int] | None = None
        if past:
            positions = list(range(plan.cut + 1))
        if sample == 0 and plan.mask is not None:
            positions = [p for p in (positions or range(plan.length)) if p not in plan.pads]
        regions.append(Region((sample,), None if positions is None else tuple(positions)))
    return regions


def _probe(net: nn.Cell, inputs: tuple[Any, ...], plan: Plan, recorder: _Recorder) -> DependencyResult:
    runner = _Runner(net, inputs, recorder, plan)
    sequence, padding, last = plan.cut > 0, plan.mask is not None, plan.batch - 1
    base, base_calls = runner.run(plan.arrays)
    if not any(np.isfinite(a).any() for a in base):
        raise ValueError(
            "the output on the batch given is not finite (NaN or infinite): nothing can be compared"
        )
    dtypes = list(runner.dtypes)
    floor = ULP_FACTOR * _ulp(dtypes)
    rolls = sequence and plan.rolls()
    combined = [Change(last, "roll" if rolls else "all")]
    combined += [Change(s, "future") for s in range(last)] if sequence else []
    combined += [Change(0, "pads")] if padding else []
    mixed, mixed_calls = runner.run(plan.variant(combined))
    leak = _relative(base, mixed, _regions(plan, range(last), sequence), plan.length)
    noise: float | None = None

    def tolerance() -> float:
        """The bound any finding must exceed: measured noise of the same pass, or the dtype's precision."""
        nonlocal noise
        if noise is None:
            again, _ = runner.run(plan.arrays)
            noise = _relative(base, again, [Region(tuple(range(plan.batch)))], plan.length)
        return max(NOISE_FACTOR * noise, floor)

    judged = runner.judged_path
    results: dict[str, Dependence] = {}
    kinds = ["batch"] + (["future"] if sequence else []) + (["padding"] if padding else [])
    single = {
        "batch": ([Change(last, "all")], _regions(plan, range(last), False)),
        "future": ([Change(0, "future")], _regions(plan, [0], True)),
        "padding": ([Change(0, "pads")], _regions(plan, [0], False)),
    }
    for kind in kinds:
        if leak <= floor:  # nothing moved where nothing may: every probe of the combined pass is clean
            results[kind] = Dependence(kind, False, leak, floor, judged)
            continue
        changes, regions = single[kind]
        outputs, calls = runner.run(plan.variant(changes))
        change, bound = _relative(base, outputs, regions, plan.length), tolerance()
        entry = None
        if change > bound:
            entry = _entry(base_calls, calls, regions, plan.length, bound) or judged
        results[kind] = Dependence(kind, entry is not None, change, bound, judged, entry)
    not_run: dict[str, str] = {}
    if sequence and not rolls:
        not_run["positions"] = (
            "the tokens before the middle of the last sample are all the same: reordering them changes nothing"
        )
    elif sequence:
        results["positions"] = _positions(
            plan, runner, base, base_calls, (mixed, mixed_calls), results, floor, tolerance
        )
    return DependencyResult(
        results,
        not_run,
        runner.passes,
        noise,
        ",".join(sorted(set(dtypes))),
        plan.batch,
        plan.length,
        plan.cut,
        plan.pads,
        plan.padded_by_probe,
    )


def _positions(
    plan: Plan,
    runner: _Runner,
    base: list[np.ndarray],
    base_calls: list[_Call],
    mixed: tuple[list[np.ndarray], list[_Call]],
    results: dict[str, Dependence],
    floor: float,
    tolerance: Any,
) -> Dependence:
    """Whether the first cell that mixes positions sees their order.

    The first call (in the order calls return) whose output at the last position of sample 0
    moves when only its future before that position changed mixes positions; the first whose
    output at and after the cut of the last sample moves when only the tokens before the cut
    were reordered sees the order. On a model that reads positions they are the same call; a
    causal model with no positional information reads order only from its mask, one layer
    later; a bag of words never.
    """
    last, length = plan.batch - 1, plan.length
    outputs, calls = mixed
    if results["batch"].found:  # the other samples' changes reach the last one: reorder it alone
        outputs, calls = runner.run(plan.variant([Change(last, "roll")]))
        mixing_calls = runner.run(plan.variant([Change(0, "future")]))[1]
    else:
        mixing_calls = calls
    after = [Region((last,), tuple(range(plan.cut, length)))]
    stays, effect = (
        _relative(base, outputs, after, length),
        _relative(base, outputs, [Region((last,), tuple(range(plan.cut)))], length),
    )
    bound = floor if stays > floor else tolerance()
    reaches_last = [Region((0,), (length - 1,))]
    mixes = _first_moving(base_calls, mixing_calls, reaches_last, length, bound)
    ordered = _first_moving(base_calls, calls, after, length, bound)
    judged = runner.judged_path
    if stays <= bound:  # the judged output itself does not see the order
        found = effect > bound
        return Dependence("positions", found, stays, bound, judged, judged if found else None, effect)
    if mixes is None or (ordered is not None and ordered <= mixes):
        return Dependence("positions", False, stays, bound, judged, None, effect)
    entry = _entry(base_calls, mixing_calls, reaches_last, length, bound) or base_calls[mixes].path
    return Dependence("positions", True, stays, bound, judged, entry, effect)


def probe_dependencies(
    net: nn.Cell,
    inputs: tuple[Any, ...],
    cells: dict[str, nn.Cell],
    *,
    sequence: bool = False,
    mask: int | None = None,
) -> DependencyResult | str:
    """Probe *net* on *inputs* (its ``construct`` arguments); *cells* by path are hooked.

    *sequence*: run the sequence probes (the future, the positions); *mask*: the index among
    *inputs* of the attention mask (the padding probe). Returns the result, or a sentence
    saying why the probe could not run.
    """
    arrays = [tensor_values(x).copy() if isinstance(x, Tensor) else None for x in inputs]
    try:
        Plan.of(arrays, sequence=False)
    except ValueError as err:
        return str(err)
    not_run: dict[str, str] = {}
    for probes, kinds in ((sequence, ("future", "positions")), (mask is not None, ("padding",))):
        if not probes:
            continue
        try:
            Plan.of(arrays, sequence=kinds[0] == "future", mask=mask if kinds[0] == "padding" else None)
        except ValueError as err:
            not_run.update(dict.fromkeys(kinds, str(err)))
    sequence = sequence and "future" not in not_run
    mask = None if "padding" in not_run else mask
    plan = Plan.of(arrays, sequence=sequence, mask=mask)
    params = unique(p for cell in cells.values() for p in cell.get_parameters())
    try:
        with preserved(list(cells.values()), params) as snapshot:
            for param in params:
                if not param.requires_grad:
                    snapshot.save_parameter(param)  # buffers a pass could write (moving statistics)
            if ms.get_context("mode") != ms.PYNATIVE_MODE:
                ms.set_context(mode=ms.PYNATIVE_MODE)  # put back by preserved()
            with training_flags(net, False), _hooked(cells) as recorder:
                result = _probe(net, inputs, plan, recorder)
                result.not_run.update(not_run)
                return result
    except ValueError as err:
        return str(err)
    except Exception as err:
        return f"a probe pass raised {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
