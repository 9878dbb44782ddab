"""The dependency probe: what an output depends on, found by running the network on changed batches.

:func:`probe_dependencies` runs the network in inference mode (``set_train(False)``: no
Dropout, BatchNorm on its moving statistics, so that nothing mixes samples legitimately)
on the batch given and on variants of it (:mod:`graphaudit.capture.dependency.plan`):

1. the batch as given (the baseline);
2. one combined variant: the last sample changed (its positions before the cut rolled by one
   for a sequence model, every value otherwise), the future of the other samples changed
   (sequence probes), the padded positions of sample 0 changed (padding probe), run on the
   samples in reverse order and read back (a mix flowing one way reaches a judged sample).

On a sound network the outputs of the other samples at their past and real positions are
then bit for bit those of the baseline (every cross-dependency is exact zero: a masked score
underflows to zero in ``softmax``), and two passes are all it costs. When something moved, the
causes are told apart by one variant each (the last sample only, sample 0's future only, its
pads only), the run-to-run noise is measured by running the baseline again, and the first cell
(in the order cells return) whose output moves while its inputs do not is where the dependency
enters: every cell's inputs and outputs are recorded with forward hooks, removed afterwards
(on the clean path of a model that is not a sequence model only the judged output is kept:
keeping every cell's tensors would hold the whole pass's activations, twice).

Everything is put back (:mod:`graphaudit.capture.network.isolation`): parameters, buffers, training
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

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn

from graphaudit.capture.compilation.jit import jit_disabled
from graphaudit.capture.dependency.passes import Call, Recorder, Runner, entry, first_moving, hooked, relative
from graphaudit.capture.dependency.plan import ONE_STACK, Change, Plan, Region, Stack
from graphaudit.capture.network.isolation import preserved, training_flags
from graphaudit.capture.network.values import tensor_values
from graphaudit.capture.network.wrappers import EXCLUSIVE
from graphaudit.capture.training.optimizer import unique
from graphaudit.capture.training.step_harness import graphs_not_saved

__all__ = ["Dependence", "DependencyResult", "probe_dependencies"]

#: The tolerance, relative to an output's largest value: this many times the run-to-run noise
#: of the same pass, and at least this many units in the last place of the output's dtype.
NOISE_FACTOR = 4.0
ULP_FACTOR = 8.0
#: The combined pass's bound (relative), at least: the batch reversed, MatMul and softmax round
#: a row a few float32 units differently at another row position (measured up to 7.4 units on
#: vit_b_32_224, a batch of 4; see docs/dependencies.md). Findings are never read on that pass.
REVERSED_FLOOR = 64 * 2.0**-23


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
    sample: int = -1  # the batch probe: the sample whose change moved the others (-1: the last)


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


#: The unit in the last place (relative) of each floating dtype an output may have.
_EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}


def _ulp(dtypes: list[str]) -> float:
    """The coarsest precision among the outputs' dtypes (float32's when none is a float)."""
    return max((_EPS[d] for d in dtypes if d in _EPS), default=_EPS["float32"])


def _regions(plan: Plan, samples: range | list[int], past: bool) -> list[Region]:
    """Where the other samples must not move: their past (sequence probes), sample 0's real positions."""
    regions = []
    for sample in samples:
        positions: list[int] | None = None
        if past:
            positions = list(range(plan.cut + 1))
        if sample == 0 and plan.mask is not None:
            positions = [p for p in (positions or range(plan.length)) if p not in plan.judged_pads]
        regions.append(Region((sample,), None if positions is None else tuple(positions)))
    return regions


def _unreached(plan: Plan) -> str:
    return (
        f"changing the tokens of input {plan.source + 1} after position {plan.cut} moved none of the outputs "
        "judged, at any position: the input the sequence probes change does not reach them"
    )


def _stack_outputs(runner: Runner, plan: Plan, base: list[np.ndarray]) -> list[np.ndarray]:
    """The judged outputs that the causal stack makes, out of *base*; the runner reads only those from now on.

    A model with two stacks returns the encoder's tensors too (its last hidden state, the
    cross-attention's keys and values), which the encoder's padding moves at its own
    positions and whose other axes may be as long as the decoder's sequence. One pass that
    changes every sample's future, on the decoder's side only, shows which outputs the decoder
    makes: they move, the encoder's do not.
    """
    changed, _ = runner.run(plan.variant([Change(s, "future") for s in range(plan.batch)]), "judged")
    whole = Region(tuple(range(plan.batch)))
    runner.only = tuple(
        i for i, (a, b) in enumerate(zip(base, changed)) if relative([a], [b], [whole], 0) > 0
    )
    runner.first = [base[i] for i in runner.only]
    return runner.first


def _probe(net: nn.Cell, inputs: tuple[Any, ...], plan: Plan, recorder: Recorder) -> DependencyResult:
    runner = Runner(net, inputs, recorder, plan)
    sequence, padding, last = plan.cut > 0, plan.mask is not None, plan.batch - 1
    # Only the sequence probes read the cells of a sound model (where the order enters); the
    # batch and padding probes read them when something moved: the clean path keeps no more
    # than the judged output, and a finding costs one pass more (the baseline, recorded whole).
    keeping = "all" if sequence else "judged"
    base, base_calls = runner.run(plan.arrays, "all" if sequence else "candidate")
    if not any(np.isfinite(a).any() for a in base):
        raise ValueError(
            "the output on the batch given is not finite (NaN or infinite): nothing can be compared"
        )
    not_run: dict[str, str] = {}
    if sequence and plan.stack.side is not None:
        base = _stack_outputs(runner, plan, base)
        if not base:
            sequence = False
            not_run = dict.fromkeys(("future", "positions"), _unreached(plan))
    dtypes = list(runner.dtypes)
    floor = ULP_FACTOR * _ulp(dtypes)
    # The combined pass runs on the samples in reverse order (read back in the order given): a
    # mix that flows one way only (a cumulative sum, a shift, a causal operation over a
    # (B*T, C) flattening) then reaches a judged sample whichever way it flows. Kernels round
    # rows a little differently at other row positions: the screen's bound allows for that.
    screen = max(floor, REVERSED_FLOOR)
    rolls = sequence and plan.rolls()
    combined = [Change(last, "roll" if rolls else "all")]
    combined += [Change(s, "future") for s in range(last)] if sequence else []
    combined += [Change(0, "pads")] if padding else []
    mixed, mixed_calls = runner.run(plan.variant(combined), keeping, reverse=True)
    leak = relative(base, mixed, _regions(plan, range(last), sequence), plan.length)
    future = [Region(tuple(range(last)), tuple(range(plan.cut + 1, plan.length)))]
    if sequence and relative(base, mixed, future, plan.length) <= screen:
        # Nothing the sequence probes judge reads the input they change: "OK" would mean "not checked".
        sequence = False
        not_run = dict.fromkeys(("future", "positions"), _unreached(plan))
    if leak > screen and keeping != "all":
        base_calls = runner.run(plan.arrays)[1]
        keeping = "all"
    noise: float | None = None

    def tolerance() -> float:
        """The bound any finding must exceed: measured noise of the same pass, or the dtype's precision."""
        nonlocal noise
        if noise is None:
            again, _ = runner.run(plan.arrays, "judged")
            noise = relative(base, again, [Region(tuple(range(plan.batch)))], plan.length)
        return max(NOISE_FACTOR * noise, floor)

    judged = runner.judged_path
    results: dict[str, Dependence] = {}
    kinds = ["batch"] + (["future"] if sequence else []) + (["padding"] if padding else [])
    single = {
        "future": ([Change(0, "future")], _regions(plan, [0], True)),
        "padding": ([Change(0, "pads")], _regions(plan, [0], False)),
    }
    for kind in kinds:
        if leak <= screen:  # nothing moved where nothing may: every probe of the combined pass is clean
            results[kind] = Dependence(kind, False, leak, screen, judged)
            continue
        if kind == "batch":
            results[kind] = _samples(plan, runner, base, base_calls, keeping, tolerance)
            continue
        changes, regions = single[kind]
        outputs, calls = runner.run(plan.variant(changes), keeping)
        change, bound = relative(base, outputs, regions, plan.length), tolerance()
        where = None
        if change > bound:
            where = entry(base_calls, calls, regions, plan.length, bound) or judged
        results[kind] = Dependence(kind, where is not None, change, bound, judged, where)
    if sequence and not rolls:
        not_run["positions"] = (
            "the tokens before the middle of the last sample are all the same: reordering them changes nothing"
        )
    elif sequence:
        results["positions"] = _positions(
            plan, runner, base, base_calls, (mixed, mixed_calls), results, (floor, screen), tolerance
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


def _samples(
    plan: Plan, runner: Runner, base: list[np.ndarray], base_calls: list[Call], keeping: str, tolerance: Any
) -> Dependence:
    """Which sample's change moves the others, on passes as given (never reversed): the last, the first, then each between.

    The combined (reversed) pass moved. Changing the last sample alone finds every mix
    into the others from it (today's direction: a mean over the batch, a reshape); the first
    alone every mix from it (a cumulative sum or shift flowing forward); the samples between
    find a mix between two of them only. The first that moves the others is reported, named
    where it enters; none: the reversal alone moved (kernels that round rows by position).
    """
    order = [plan.batch - 1, 0, *range(1, plan.batch - 1)]
    worst: Dependence | None = None
    for sample in order:
        regions = _regions(plan, [s for s in range(plan.batch) if s != sample], False)
        outputs, calls = runner.run(plan.variant([Change(sample, "all")]), keeping)
        change, bound = relative(base, outputs, regions, plan.length), tolerance()
        if change > bound:
            where = entry(base_calls, calls, regions, plan.length, bound) or runner.judged_path
            return Dependence("batch", True, change, bound, runner.judged_path, where, sample=sample)
        if worst is None or change > worst.change:
            worst = Dependence("batch", False, change, bound, runner.judged_path, sample=sample)
    assert worst is not None
    return worst


def _positions(
    plan: Plan,
    runner: Runner,
    base: list[np.ndarray],
    base_calls: list[Call],
    mixed: tuple[list[np.ndarray], list[Call]],
    results: dict[str, Dependence],
    bounds: tuple[float, float],
    tolerance: Any,
) -> Dependence:
    """Whether the first cell that mixes positions sees their order.

    The first call (in the order calls return) whose output at the last position of sample 0
    moves when only its future before that position changed mixes positions; the first whose
    output at and after the cut of the last sample moves when only the tokens before the cut
    were reordered sees the order. On a model that reads positions they are the same call; a
    causal model with no positional information reads order only from its mask, one layer
    later; a bag of words never.

    *bounds*: the dtype's floor, and the combined pass's (its samples reversed: a cell's
    output there is read with the larger). A finding read on the combined pass, which also
    changed sample 0's padding (it moves cells that mix no position of the sequence probed: an
    encoder's last position, its source right-padded) and whose calls were read back from the
    reversed batch (a tensor not laid out ``(B, ...)`` reads as moved), is confirmed on two
    passes as given: the order alone, sample 0's future alone.
    """
    last, length, (floor, screen) = plan.batch - 1, plan.length, bounds
    after = [Region((last,), tuple(range(plan.cut, length)))]
    reaches_last = [Region((0,), (length - 1,))]
    judged = runner.judged_path

    def judge(
        rolled: tuple[list[np.ndarray], list[Call]], mixing: tuple[list[np.ndarray], list[Call]]
    ) -> Dependence:
        (outputs, calls), (moved_outputs, mixing_calls) = rolled, mixing
        stays, effect = (
            relative(base, outputs, after, length),
            relative(base, outputs, [Region((last,), tuple(range(plan.cut)))], length),
        )
        bound = floor if stays > floor else tolerance()
        ordered = first_moving(base_calls, calls, after, length, _reading(bound, calls, screen))
        mixes = first_moving(
            base_calls, mixing_calls, reaches_last, length, _reading(bound, mixing_calls, screen)
        )
        if stays <= bound:  # the judged output itself does not see the order...
            # ...and is reported when it mixes positions: a per-token output (an embedding judged
            # because nothing later has the sequence's length) says nothing about order.
            found = effect > bound and relative(base, moved_outputs, reaches_last, length) > bound
            return Dependence("positions", found, stays, bound, judged, judged if found else None, effect)
        if mixes is None or (ordered is not None and ordered <= mixes):
            return Dependence("positions", False, stays, bound, judged, None, effect)
        where = entry(base_calls, mixing_calls, reaches_last, length, bound) or base_calls[mixes].path
        return Dependence("positions", True, stays, bound, judged, where, effect)

    def as_given() -> tuple[list[np.ndarray], list[Call]]:
        return runner.run(plan.variant([Change(last, "roll")]))

    def future_alone() -> tuple[list[np.ndarray], list[Call]]:
        return runner.run(plan.variant([Change(0, "future")]))

    if results["batch"].found:  # the other samples' changes reach the last one: reorder it alone
        return judge(as_given(), future_alone())
    rolled = mixed
    if floor < relative(base, mixed[0], after, length) <= screen:
        # The reordered sample moved by no more than the reversal may: read the order as given.
        rolled = as_given()
    result = judge(rolled, mixed)
    if result.found:
        result = judge(rolled if not _reversed(rolled[1]) else as_given(), future_alone())
    return result


def _reversed(calls: list[Call]) -> bool:
    return bool(calls) and calls[-1].reversed > 0


def _reading(bound: float, calls: list[Call], screen: float) -> float:
    """The bound a cell's output is read with: the combined pass's on a pass whose samples were reversed."""
    return max(bound, screen) if _reversed(calls) else bound


def probe_dependencies(
    net: nn.Cell,
    inputs: tuple[Any, ...],
    cells: dict[str, nn.Cell],
    *,
    sequence: bool = False,
    mask: int | None = None,
    stack: Stack = ONE_STACK,
    parameters: Iterable[Parameter] = (),
    time_major: bool = False,
) -> DependencyResult | str:
    """Probe *net* on *inputs* (its ``construct`` arguments); *cells* by path are hooked.

    *sequence*: run the sequence probes (the future, the positions) on the causal stack that
    *stack* says feeds on which input (one stack, fed by the first token input, by default);
    *mask*: the index among *inputs* of the attention mask (the padding probe); *time_major*:
    the network reads time-major sequences, and its ``(T, B, ...)`` tensors are read batch first
    (:attr:`Plan.time_major`). Returns the result, or a sentence saying why the probe could not run.
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
            Plan.of(
                arrays,
                sequence=kinds[0] == "future",
                mask=mask if kinds[0] == "padding" else None,
                stack=stack,
            )
        except ValueError as err:
            not_run.update(dict.fromkeys(kinds, str(err)))
    sequence = sequence and "future" not in not_run
    mask = None if "padding" in not_run else mask
    plan = Plan.of(arrays, sequence=sequence, mask=mask, stack=stack, time_major=time_major)
    params = unique([*parameters, *(p for cell in cells.values() for p in cell.get_parameters())])
    try:
        with EXCLUSIVE, graphs_not_saved(), preserved(list(cells.values()), params) as snapshot:
            snapshot.save_now(p for p in params if not p.requires_grad)  # buffers a pass could write
            if ms.get_context("mode") != ms.PYNATIVE_MODE:
                ms.set_context(mode=ms.PYNATIVE_MODE)  # put back by preserved()
            # A cell kept in a plain list is not reached by set_train: it runs as the user's
            # inference would run it (a BatchNorm there still mixes samples), its buffers saved.
            # What the user compiles with mindspore.jit runs as Python, as in the traced pass: the
            # hooks see inside it, and a compiled construct is not handed the hooks' arguments.
            with jit_disabled(), training_flags(net, False), hooked(cells) as recorder:
                result = _probe(net, inputs, plan, recorder)
                result.not_run.update(not_run)
                return result
    except ValueError as err:
        return str(err)
    except Exception as err:
        return f"a probe pass raised {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
