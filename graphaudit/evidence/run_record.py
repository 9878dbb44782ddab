"""What the watch records of a real training run: plain data (no MindSpore), read through :mod:`graphaudit.evidence.training`.

:class:`RunRecord` is what the watch samples while the user's own training runs: the loss of
every step, the epochs, the validation losses (and a classifier's accuracy), and every
``every`` steps per parameter the gradient's norm, the weight's norm and the update's norm,
plus a few fixed values of each weight (for the distributions over steps).

Example:
    >>> record = RunRecord(parameters=("w",))
    >>> record.losses.extend([2.0, 1.5, 1.0]); record.epochs.extend([1, 1, 2])
    >>> record.epoch_losses()
    [(1, 1.75), (2, 1.0)]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Chance", "NonFinite", "RankStep", "RunRecord", "Sample"]


@dataclass(frozen=True)
class Chance:
    """A uniform guess's loss under the run's loss function (``ln C`` over C classes), and what that loss is."""

    loss: float
    what: str


@dataclass
class Sample:
    """One sampled step: per parameter (in :attr:`RunRecord.parameters` order) the norms, ``None`` when unknown.

    ``weight_norms`` are of the weights before the step's update, ``update_norms`` of the
    update, ``grad_norms`` of the gradients the optimizer got, ``values`` the weights after.
    """

    step: int
    weight_norms: list[float]
    update_norms: list[float | None]
    grad_norms: list[float | None] | None = None
    values: list[Any] = field(default_factory=list)  # per weight, a NumPy array of its fixed positions

    def ratio(self, position: int) -> float | None:
        """‖Δw‖/‖w‖ of the parameter at *position*, or ``None``."""
        update, weight = self.update_norms[position], self.weight_norms[position]
        if update is None or not math.isfinite(update) or not math.isfinite(weight):
            return None
        return update / weight if weight > 0 else (0.0 if update == 0 else math.inf)

    def to_dict(self) -> dict[str, object]:
        return {
            "step": self.step,
            "weight_norms": self.weight_norms,
            "update_norms": self.update_norms,
            "grad_norms": self.grad_norms,
        }


@dataclass
class NonFinite:
    """Where a value first became NaN or Inf: the step, and the first gradient and weight (network order)."""

    step: int
    epoch: int
    loss: float
    gradient: str | None = None
    weight: str | None = None
    forward: str | None = None  # the first cell whose output was not finite, when it was looked for
    tensor: str | None = None  # that cell's output: which, its shape, how many NaN and Inf
    forward_note: str | None = None  # how the forward pass was re-run, or why it was not


@dataclass(frozen=True)
class RankStep:
    """One sampled step of a run under msrun: every rank's loss and gradient norm, in rank order.

    ``grad_norms`` is ``None`` when no rank's watch had the gradients; an entry is ``None`` when
    that rank's was unknown or not finite.
    """

    step: int
    losses: tuple[float, ...]
    grad_norms: tuple[float | None, ...] | None = None


@dataclass
class RunRecord:
    """What a watch recorded (see the module docstring); steps are numbered from 1."""

    parameters: tuple[str, ...]
    sizes: tuple[int, ...] = ()  # the number of values of each parameter
    ndims: tuple[int, ...] = ()  # and its number of dimensions (2 or more: a weight matrix or kernel)
    batch_size: int | None = None
    every: int = 1
    losses: list[float] = field(default_factory=list)
    epochs: list[int] = field(default_factory=list)
    overflows: list[bool] = field(default_factory=list)  # one per step when the step is loss-scaled
    loss_scales: list[float | None] = field(default_factory=list)  # and its loss scale, when the step said it
    loss_scaled: bool = False
    gradients_seen: bool = False
    gradients_reason: str | None = None
    noise_reason: str | None = None  # why the gradients themselves (the noise scale's) were not seen
    samples: list[Sample] = field(default_factory=list)
    validation: list[tuple[int, int, float]] = field(default_factory=list)  # (epoch, step, loss)
    # a classifier's validation accuracy and the samples it counted, one per validation (else None)
    validation_accuracy: list[tuple[float, int] | None] = field(default_factory=list)
    non_finite: NonFinite | None = None
    chance: Chance | None = None  # a uniform guess's loss, the yardstick of the first loss (GA965)
    steps_per_call: int = 1  # steps a callback sees at once: a dataset sink's size on a device
    chance_reason: str | None = (
        "a graphaudit.watch() loop does not say its loss function; Watch() reads Model's"
    )
    noise_windows: list[tuple[int, float, float]] = field(default_factory=list)  # (k, mean |g|^2, |mean g|^2)
    world_size: int = 1
    drift: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)  # (step, parameters differing)
    drift_checks: int = 0
    rank_steps: list[RankStep] = field(default_factory=list)  # every rank's loss at each sampled step
    stopped: str | None = None
    finished: bool = False  # the run is over (the end-of-run watchpoints judge only then)
    network_parameters: tuple[
        str, ...
    ] = ()  # every parameter of the network (a baseline's names are checked)

    def add_validation(self, epoch: int, result: Any) -> None:
        """Record one evaluation (a :class:`~graphaudit.watch.validation.Validation`) at this step."""
        self.validation.append((epoch, self.steps, result.loss))
        known = result.accuracy is not None and result.samples > 0
        self.validation_accuracy.append((result.accuracy, result.samples) if known else None)

    def epoch_losses(self) -> list[tuple[int, float]]:
        """The mean finite training loss of each epoch, in order."""
        sums: dict[int, list[float]] = {}
        for epoch, loss in zip(self.epochs, self.losses):
            if math.isfinite(loss):
                sums.setdefault(epoch, []).append(loss)
        return [(epoch, sum(v) / len(v)) for epoch, v in sums.items()]

    @property
    def steps(self) -> int:
        return len(self.losses)

    def matrices(self) -> list[int]:
        """The positions of the weight matrices and kernels (the parameters the per-layer rules judge)."""
        return [i for i, ndim in enumerate(self.ndims) if ndim >= 2]
