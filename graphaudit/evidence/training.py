"""A real training run, watched (``graphaudit.Watch()`` / ``graphaudit.watch(...)``; ``audit(..., watched=run)``).

:class:`RunRecord` (:mod:`graphaudit.evidence.run_record`) is what the watch samples while the
user's own training runs. It is plain data (no MindSpore), kept by
:mod:`graphaudit.watch` and read by the watchpoints (checks GA950-GA979). The evidence kinds
here split it by what a watchpoint needs, so that a watchpoint whose data the run did not have
(no validation, no gradients in GRAPH_MODE, no loss scaling, one rank) is NOT RUN, with why.

Example:
    >>> record = RunRecord(parameters=("w",))
    >>> record.losses.extend([2.0, 1.5, 1.0]); record.epochs.extend([1, 1, 2])
    >>> record.epoch_losses()
    [(1, 1.75), (2, 1.0)]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from graphaudit.errors import ArgumentTypeError
from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Option, Requirement
from graphaudit.evidence.run_record import Chance, NonFinite, RankStep, RunRecord, Sample

__all__ = [
    "Chance",
    "GradientNoise",
    "NonFinite",
    "RankDrift",
    "RankLosses",
    "RankStep",
    "RunRecord",
    "Sample",
    "StartLoss",
    "StepUpdates",
    "TrainingRun",
    "WatchedGradients",
    "WatchedLossScale",
    "WatchedValidation",
]

#: The fewest gradient windows (of 5 samples each) the noise-scale estimate is made from.
MIN_NOISE_WINDOWS = 3
_RUN = "train with graphaudit.Watch() (Model.train) or graphaudit.watch(net, optimizer) (a loop)"


def _record(name: str, value: Any) -> RunRecord:
    """*value* when it is a watch's :class:`RunRecord` (the door's check of ``watched=``)."""
    if not isinstance(value, RunRecord):
        raise ArgumentTypeError(
            f"{name}= takes the .record of a graphaudit watch, got {type(value).__name__}"
        )
    return value


@dataclass(frozen=True)
class TrainingRun(Evidence):
    """The watched run: losses of every step and the sampled per-parameter numbers."""

    title = "a watched training run"
    requirement = Requirement(
        f"{_RUN}; its .report runs these watchpoints (or pass watched=watch.record)",
        "train under graphaudit.Watch() in Python; the command line cannot watch a run",
    )
    options = (
        Option(
            "watched", "the RunRecord of a graphaudit.Watch() / watch() run (watch.record)", parse=_record
        ),
    )

    record: RunRecord

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> TrainingRun | Missing:
        record = request.option("watched")
        if record is None:
            return Missing()
        if not isinstance(record, RunRecord):
            return Missing(f"watched= takes the .record of a graphaudit watch, got {type(record).__name__}")
        if not record.losses:
            return Missing("the watched run trained no step")
        return cls(record)


@dataclass(frozen=True)
class WatchedValidation(Evidence):
    """The validation loss of each evaluation of the watched run."""

    title = "validation losses of the watched run"
    requirement = Requirement(
        f"{_RUN}, with Model.fit(valid_dataset=...) and a 'loss' metric, or Watch(eval_dataset=...)",
        "train under graphaudit.Watch(eval_dataset=...) in Python",
    )
    needs = (TrainingRun,)

    points: tuple[tuple[int, int, float], ...]
    accuracy: tuple[
        tuple[float, int] | None, ...
    ] = ()  # a classifier's (accuracy, samples) per point, else None

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> WatchedValidation | Missing:
        record = have.need(TrainingRun).record
        if not record.validation:
            return Missing()
        known = record.validation_accuracy[: len(record.validation)]
        return cls(tuple(record.validation), tuple(known) + (None,) * (len(record.validation) - len(known)))


def _sunk(record: RunRecord, what: str) -> str:
    return (
        f"Model.train ran in dataset sink mode, {record.steps_per_call} steps a call: {what}; "
        "train with dataset_sink_mode=False to judge it"
    )


@dataclass(frozen=True)
class StepUpdates(Evidence):
    """The sampled updates of the watched run, each one step's (not a dataset sink's many)."""

    title = "one step's update at each sampled step of the watched run"
    requirement = Requirement(
        f"{_RUN}; without a dataset sink of more than one step", "train under graphaudit.Watch() in Python"
    )
    needs = (TrainingRun,)

    samples: tuple[Sample, ...]

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> StepUpdates | Missing:
        record = have.need(TrainingRun).record
        if record.steps_per_call > 1:
            return Missing(_sunk(record, "the weights are seen once a sink, so an update spans its steps"))
        return cls(tuple(record.samples))


@dataclass(frozen=True)
class StartLoss(Evidence):
    """The watched run's first loss beside a uniform guess's, and the first sampled gradient and weight norms."""

    title = "the first loss of the watched run and a uniform guess's"
    requirement = Requirement(
        f"{_RUN}; Model.train with one of MindSpore's cross-entropy losses",
        "train under graphaudit.Watch() in Python",
    )
    needs = (TrainingRun,)

    loss: float
    chance: Chance
    first: Sample | None  # the first sampled step, with its gradient norms when they were seen

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> StartLoss | Missing:
        record = have.need(TrainingRun).record
        if record.steps_per_call > 1:
            return Missing(_sunk(record, "the first loss seen is that of the first sink's last step"))
        if record.chance is None:
            return Missing(record.chance_reason)
        if not math.isfinite(record.losses[0]):
            return Missing("the first loss was not finite (GA950's)")
        first = record.samples[0] if record.samples and record.samples[0].step == 1 else None
        return cls(record.losses[0], record.chance, first)


@dataclass(frozen=True)
class WatchedGradients(Evidence):
    """The gradients the optimizer got, sampled every ``every`` steps."""

    title = "gradients sampled from the watched run"
    requirement = Requirement(
        f"{_RUN}; Model.train shows its gradients in PyNative mode; a loop passes w.step(grads=...)",
        "train under graphaudit.Watch() in Python",
    )
    needs = (TrainingRun,)

    samples: tuple[Sample, ...]

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> WatchedGradients | Missing:
        record = have.need(TrainingRun).record
        sampled = tuple(s for s in record.samples if s.grad_norms is not None)
        if not sampled:
            return Missing(record.gradients_reason)
        return cls(sampled)


@dataclass(frozen=True)
class GradientNoise(Evidence):
    """The gradient windows of the noise-scale estimate, with the batch size they were taken at."""

    title = "gradient windows and the batch size of the watched run"
    requirement = Requirement(
        f"{_RUN}, for 15 sampled steps or more with gradients; a loop also passes watch(batch_size=N)",
        "train under graphaudit.Watch() in Python",
    )
    needs = (TrainingRun, WatchedGradients)

    windows: tuple[tuple[int, float, float], ...]
    batch_size: int

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> GradientNoise | Missing:
        record = have.need(TrainingRun).record
        if record.batch_size is None:
            return Missing("the batch size is not known: pass watch(..., batch_size=N)")
        if record.noise_reason is not None and not record.noise_windows:
            return Missing(record.noise_reason)
        if len(record.noise_windows) < MIN_NOISE_WINDOWS:
            return Missing(
                f"{len(record.noise_windows)} gradient windows were sampled, {MIN_NOISE_WINDOWS} are needed: "
                "sample more often (every=) or train longer"
            )
        return cls(tuple(record.noise_windows), int(record.batch_size))


@dataclass(frozen=True)
class WatchedLossScale(Evidence):
    """Whether each step of a loss-scaled run overflowed, and at what loss scale (``None``: not said)."""

    title = "the loss-scale overflows of the watched run"
    requirement = Requirement(
        f"{_RUN} with a loss-scaled train step (loss_scale_manager=, TrainOneStepWithLossScaleCell)",
        "train under graphaudit.Watch() in Python",
    )
    needs = (TrainingRun,)

    overflows: tuple[bool, ...]
    scales: tuple[float | None, ...] = ()

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> WatchedLossScale | Missing:
        record = have.need(TrainingRun).record
        if not record.loss_scaled or not record.overflows:
            return Missing()
        return cls(tuple(record.overflows), tuple(record.loss_scales))


@dataclass(frozen=True)
class RankDrift(Evidence):
    """The weight fingerprints of every rank, compared every few steps of the watched run."""

    title = "the weights of every rank during the watched run"
    requirement = Requirement(
        f"{_RUN} under msrun (data parallel, mindspore.communication initialised)",
        "train under graphaudit.Watch() in Python, under msrun",
    )
    needs = (TrainingRun,)

    drift: tuple[tuple[int, tuple[str, ...]], ...]
    checks: int
    world_size: int

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> RankDrift | Missing:
        record = have.need(TrainingRun).record
        if record.world_size < 2 or record.drift_checks == 0:
            return Missing()
        return cls(tuple(record.drift), record.drift_checks, record.world_size)


@dataclass(frozen=True)
class RankLosses(Evidence):
    """Every rank's loss (and gradient norm) at each sampled step of the watched run, all-gathered."""

    title = "the losses of every rank during the watched run"
    requirement = Requirement(
        f"{_RUN} under msrun (data parallel, mindspore.communication initialised)",
        "train under graphaudit.Watch() in Python, under msrun",
    )
    needs = (TrainingRun,)

    steps: tuple[RankStep, ...]
    world_size: int

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> RankLosses | Missing:
        record = have.need(TrainingRun).record
        steps = getattr(record, "rank_steps", [])  # a record pickled before per-rank losses existed has none
        if record.world_size < 2 or not steps:
            return Missing()
        return cls(tuple(steps), record.world_size)
