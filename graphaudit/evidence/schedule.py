"""The optimizer's learning-rate schedules, read without training (GA914-GA916).

One :class:`~graphaudit.capture.training.lr_schedules.Schedule` per learning-rate group: a fixed value, a
list of per-step values (``nn.dynamic_lr``) or a ``LearningRateSchedule`` cell evaluated at
sampled steps (up to ``total_steps=`` when given). Also whether the optimizer is of the Adam
family (adaptive moments, which want a warm-up at large rates).

Example:
    >>> from mindspore import nn
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> net = nn.Dense(2, 2)
    >>> optimizer = nn.Adam(net.trainable_params(), nn.CosineDecayLR(0.0, 0.01, 100))
    >>> rates = EvidenceSet(AuditRequest(net, optimizer=optimizer)).need(LearningRates)
    >>> rates.adaptive, rates.schedules[0].kind, rates.schedules[0].values[0]
    (True, 'cell', 0.009999999776482582)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Option, Requirement
from graphaudit.evidence.optimizer import OptimizerView

if TYPE_CHECKING:
    from graphaudit.capture.training.lr_schedules import Schedule

__all__ = ["ADAPTIVE_NAMES", "LearningRates"]

#: Optimizer class names (lower case, substrings) of the Adam family: adaptive per-parameter rates.
ADAPTIVE_NAMES = ("adam", "lamb", "adamax", "lion")


@dataclass(frozen=True)
class LearningRates(Evidence):
    """The optimizer's class, whether it is adaptive, and one schedule per learning-rate group."""

    title = "the optimizer's learning-rate schedule"
    requirement = Requirement("pass the optimizer", "give an optimizer (--optimizer MODULE:FACTORY)")
    needs = (OptimizerView,)
    options = (
        Option(
            "total_steps",
            "how many training steps the run lasts: a LearningRateSchedule cell is read over them "
            "(GA914-GA916; default: its own decay/warm-up steps, else 1000)",
            flag="--total-steps",
            metavar="N",
            type=int,
            minimum=1,
        ),
    )

    optimizer: str
    adaptive: bool
    schedules: tuple[Schedule, ...]

    def schedule_of(self, param: object) -> Schedule | None:
        """The schedule of *param*'s learning-rate group (``None`` when the optimizer does not hold it)."""
        return next((s for s in self.schedules if any(p is param for p in s.parameters)), None)

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> LearningRates | Missing:
        from graphaudit.capture.training.lr_schedules import read_schedules

        optimizer = have.need(OptimizerView).optimizer
        total = request.option("total_steps")  # parsed at the door (Option)
        name = type(optimizer).__name__
        adaptive = any(part in name.lower() for part in ADAPTIVE_NAMES)
        return cls(name, adaptive, tuple(read_schedules(optimizer, total)))
