"""Reading the probe's steps: the loss curve, the update-to-weight ratio per group, gradients through the depth.

Shared by the multi-step probe checks (GA906-GA913). The thresholds are here, each with
where it comes from (``docs/probe.md`` repeats them):

- ``‖Δw‖/‖w‖`` per step: Karpathy's rule of thumb (CS231n, "Neural Networks Part 3",
  *ratio of weights:updates*; and "A Recipe for Training Neural Networks") is about 1e-3 in
  steady training. The probe runs a few steps on one small batch from initialisation, where
  ratios are far larger (measured on MindSpore 2.10: mindcv resnet18 and densenet121 on a
  batch of 2 at 64x64 with Momentum(0.1) or AdamW(1e-3), the usual recipes, group medians
  0.007-0.43 (mobilenet_v2 with Momentum(0.1): 0.43); a small MLP with SGD(0.1) 2e-3, with Adam(1e-2) 0.09), so the bounds are wide:
  a group median above :data:`RATIO_TOO_LARGE` (the weights move by their own size every
  step; SGD(10) on the MLP: 8) or below :data:`RATIO_TOO_SMALL` (a thousandth of the rule of
  thumb, within 20x of float32 resolution; SGD(1e-6): 2e-8).
- Gradients through the depth: the relative gradient ``‖g‖/‖w‖`` of the weights nearest the
  input over that of the weights nearest the output. Measured: resnet18 124, densenet121 87,
  mobilenet_v2 81, a 3-layer MLP 0.19, a 12-layer ReLU MLP with default init 1.5e-4, a
  12-layer sigmoid MLP 2e-11. Below :data:`VANISHING` is vanishing, above :data:`EXPLODING`
  (or any weight with ``‖g‖/‖w‖`` above :data:`EXPLODING_RELATIVE`) exploding.

Example:
    >>> loss_trend([2.0, 1.5, 1.1, 0.8])
    'falls'
    >>> loss_trend([2.0, 2.0, 2.0, 2.0]), loss_trend([2.0, 1.0, 5.0, 3.0])
    ('flat', 'rises')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphaudit import graph as g
from graphaudit.findings import Cause
from graphaudit.text import series

if TYPE_CHECKING:
    from graphaudit.capture.training.probe_steps import ParameterProbe, StepRecord
    from graphaudit.checks.context import AuditContext

__all__ = [
    "DIVERGES",
    "DIVERGES_FROM",
    "EXPLODING",
    "EXPLODING_RELATIVE",
    "RATIO_TOO_LARGE",
    "RATIO_TOO_SMALL",
    "VANISHING",
    "DepthProfile",
    "RatioGroup",
    "UpdatesOfGroup",
    "curve_text",
    "curve_values",
    "curve_words",
    "depth_profile",
    "finite_losses",
    "loss_trend",
    "plain_number",
    "ratio_groups",
]

RATIO_TOO_LARGE = 1.0
RATIO_TOO_SMALL = 1e-6
VANISHING = 1e-5
EXPLODING = 1e5
EXPLODING_RELATIVE = 1e4
FLAT = 1e-3  # a relative fall of the loss below this, over the steps, is no fall
RISE = 0.10  # the last loss this much above the first is a rise
SPIKE = 2.0  # a loss this many times the first is a spike
#: A loss this many times the first, measured within the probe's few steps on one batch, is
#: training diverging, not a risk of it: on one repeated batch a rate that can train never
#: multiplies the loss by a thousand (measured on MindSpore 2.10: a 3-layer MLP with SGD(10)
#: 1.39 -> 1.6e8 in five steps, SGD(1e4) 1.4 -> 5e25 and NaN at the seventh, Adam(1) 1.4 -> 2588
#: at the second; SGD(0.1) falls, Adam(1e-2) falls). Not judged from a first loss below
#: DIVERGES_FROM, where a near-zero loss can multiply by rounding alone.
DIVERGES = 1e3
DIVERGES_FROM = 1e-3


def finite_losses(steps: Sequence[StepRecord]) -> list[float]:
    """The loss before each update that ran, and after the last one (skipped steps left out)."""
    return [s.loss for s in steps if s.applied]


def loss_trend(losses: Sequence[float]) -> str:
    """``"falls"``, ``"flat"``, ``"rises"`` (ends higher or spikes), ``"diverged"`` (NaN/Inf), or ``"short"``."""
    if len(losses) < 3:
        return "short"
    if not all(math.isfinite(v) for v in losses):
        return "diverged"
    first, rest = losses[0], losses[1:]
    if losses[-1] > first + RISE * abs(first) or max(rest) > SPIKE * abs(first) + 1e-12:
        return "rises"
    if abs(first) < 1e-6 or min(rest) < first - max(FLAT * abs(first), 1e-7):
        return "falls"
    return "flat"


def curve_text(steps: Sequence[StepRecord]) -> str:
    """The loss of every step, as text (skipped steps marked)."""
    return curve_words(*curve_values(steps))


def plain_number(value: float) -> float | str:
    """*value* as a cause holds it: a finite float, or the word of a non-finite one (``"nan"``, ``"inf"``).

    JSON has no NaN or Infinity: a cause's facts stay valid JSON.

    Example:
        >>> plain_number(0.5), plain_number(float("nan")), plain_number(float("-inf"))
        (0.5, 'nan', '-inf')
    """
    value = float(value)
    return value if math.isfinite(value) else str(value)


def curve_values(steps: Sequence[StepRecord]) -> tuple[tuple[float | str, ...], tuple[int, ...]]:
    """The loss of every step (:func:`plain_number`) and the positions of the skipped steps: a curve as facts."""
    return tuple(plain_number(s.loss) for s in steps), tuple(i for i, s in enumerate(steps) if not s.applied)


def curve_words(losses: Sequence[float | str], skipped: Sequence[int] = ()) -> str:
    """The losses of :func:`curve_values` as text, skipped steps marked.

    Example:
        >>> curve_words((2.0, 1.23456, "nan"), (1,))
        '2, 1.235 (skipped), nan'
    """
    return series(
        f"{float(loss):.4g}" + (" (skipped)" if i in skipped else "") for i, loss in enumerate(losses)
    )


def is_weight(p: ParameterProbe) -> bool:
    """A weight matrix or kernel the optimizer trains (biases and norm scales have other scales)."""
    return p.in_optimizer and p.requires_grad and len(p.shape) >= 2 and p.in_network


@dataclass(frozen=True)
class RatioGroup:
    """The weights of one learning-rate group and their median ‖Δw‖/‖w‖ over the steps that updated."""

    group: int
    positions: tuple[int, ...]
    median: float
    learning_rate: float | None


def ratio_groups(parameters: Sequence[ParameterProbe], steps: Sequence[StepRecord]) -> list[RatioGroup]:
    """One :class:`RatioGroup` per optimizer group holding weights (with a measurable ratio)."""
    applied = [s for s in steps if s.applied]
    by_group: dict[int, list[tuple[int, float]]] = {}
    for position, p in enumerate(parameters):
        if not is_weight(p):
            continue
        ratios = [r for s in applied if (r := s.ratio(position)) is not None and math.isfinite(r)]
        if ratios:
            by_group.setdefault(p.group, []).append((position, _median(ratios)))
    found = []
    for group, members in sorted(by_group.items()):
        lr = parameters[members[0][0]].learning_rate
        found.append(RatioGroup(group, tuple(m[0] for m in members), _median([m[1] for m in members]), lr))
    return found


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


@dataclass(frozen=True)
class DepthProfile:
    """Relative gradients ``‖g‖/‖w‖`` of the weights, from the input side to the output side."""

    positions: tuple[int, ...]
    relative: tuple[float, ...]

    @property
    def ratio(self) -> float:
        """Input side over output side (medians of the first and last few weights)."""
        k = max(1, min(3, len(self.relative) // 3))
        inner, outer = _median(self.relative[:k]), _median(self.relative[-k:])
        return inner / outer if outer > 0 else math.inf

    @property
    def vanishing(self) -> bool:
        return len(self.relative) >= 3 and self.ratio < VANISHING

    @property
    def exploding(self) -> bool:
        return len(self.relative) >= 3 and (self.ratio > EXPLODING or max(self.relative) > EXPLODING_RELATIVE)


def first_read_order(ctx: AuditContext) -> dict[str, int]:
    """``Parameter.name -> rank`` of the first call or operation of the traced pass that reads it."""
    graph = ctx.graph
    first: dict[str, int] = {}
    for node, attrs in g.nodes_of_kind(graph, g.PARAMETER):
        orders = [
            graph.nodes[target].get("order", 0)
            for _, target, d in graph.out_edges(node, data=True)
            if d["kind"] == g.READS
        ]
        if orders:
            first[attrs["name"]] = min(orders)
    return {name: rank for rank, name in enumerate(sorted(first, key=lambda name: first[name]))}


def _embedding(ctx: AuditContext, node: str) -> bool:
    graph = ctx.graph
    if node not in graph:
        return False
    owners = g.owners_of(graph, node)
    return any("Embedding" in graph.nodes[owner].get("class_name", "") for owner in owners)


def depth_profile(ctx: AuditContext, parameters: Sequence[ParameterProbe], step: StepRecord) -> DepthProfile:
    """The weights' relative gradients at *step*, ordered from the input to the output.

    The order is the traced pass's (the first read of each weight), else the network's
    parameter order. Embedding tables (sparse gradients: only the rows in the batch) and
    weights with no or a non-finite gradient are left out.
    """
    order = ctx.shared(first_read_order)
    rows: list[tuple[Any, int, float]] = []
    for position, p in enumerate(parameters):
        grad, weight = step.grad_norms[position], step.weight_norms[position]
        if not is_weight(p) or grad is None or not math.isfinite(grad) or grad <= 0 or weight <= 0:
            continue
        if _embedding(ctx, p.node):
            continue
        rows.append((order.get(p.name, len(order) + position), position, grad / weight))
    rows.sort()
    return DepthProfile(tuple(r[1] for r in rows), tuple(r[2] for r in rows))


@dataclass(frozen=True)
class UpdatesOfGroup(Cause):
    """The probe's update-to-weight ratios of one parameter group (GA908, GA909 judge them)."""

    names_subjects = True
    group: int | None  # the optimizer's parameter group, when it has several
    learning_rate: float | None  # the group's rate at the probe, when known
    median: float  # the median ‖Δw‖/‖w‖ over its weight tensors and the probe's steps
    weights: int  # how many weight tensors were measured
    names: tuple[str, ...]  # the parameters of the group
    bound: float  # the ratio beyond which updates are reported

    def which(self) -> str:
        """``parameter group 1 (learning rate 0.5)``, ``the optimizer``: whose updates these are."""
        which = f"parameter group {self.group}" if self.group is not None else "the optimizer"
        return which + ("" if self.learning_rate is None else f" (learning rate {self.learning_rate:g})")
