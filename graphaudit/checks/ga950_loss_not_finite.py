"""GA950 loss-not-finite."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.watch import parameter_nodes
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.training import TrainingRun
from graphaudit.findings import Cause, Finding
from graphaudit.text import clauses


@dataclass(frozen=True)
class LossNotFinite(Cause):
    """The watched run's loss became NaN or Inf at a step, and where the first non-finite values were."""

    names_subjects = True
    step: int
    epoch: int
    loss: str  # "nan", "inf" or "-inf"
    layer: str | None  # the first cell whose output was not finite ("(root)": the network's), when looked for
    tensor: str | None  # that cell's output: which, its shape, how many NaN and Inf
    gradient: str | None  # the first parameter whose gradient was not finite
    weight: str | None  # the first parameter whose weight was not finite
    forward_note: str | None  # how the step's forward pass was re-run, or why it was not

    def message(self) -> str:
        where = []
        if self.layer is not None:
            where.append(f"the first layer whose output was not finite was {self.layer} ({self.tensor})")
        if self.gradient is not None:
            where.append(f"the first non-finite gradient was that of {self.gradient}")
        if self.weight is not None:
            where.append(f"the first non-finite weight {self.weight}")
        if not where:
            where.append("every weight and gradient seen was still finite (the forward pass made it)")
        if self.forward_note:
            where.append(self.forward_note)
        return (
            f"The training loss became {self.loss} at step {self.step} (epoch {self.epoch}) of the watched run; "
            f"{clauses(where)}."
        )

    def fix(self) -> str:
        return (
            "Lower the learning rate, clip the gradients (ops.clip_by_global_norm), and look for an "
            "operation that leaves its domain (log, sqrt, division) or overflows in float16."
        )


@register(
    "GA950",
    "loss-not-finite",
    severity="error",
    needs=(TrainingRun,),
    causes=(LossNotFinite,),
    once="one finding per watched run: its one loss",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """The training loss became NaN or Inf during the real run.

    What it does:
        Reads the loss of every step of a watched run (``graphaudit.Watch()``,
        ``graphaudit.watch()``) and reports the first step whose loss is not finite, with
        the first gradient the optimizer got (in its parameter order) and the first weight
        that held a NaN or Inf at that step, and the first layer and tensor: that step's
        batch is re-run once, isolated, with the weights its forward pass saw, and the
        first cell whose output holds a NaN or Inf is named. Loss-scaled steps that overflowed are the
        loss scale's business (GA961) and are not counted.

    Why is this bad:
        Once the loss is NaN every weight becomes NaN at the next update and the rest of the
        run is lost, usually far from the cause: a learning rate so large the updates
        overshoot without bound, an operation that leaves its domain (``log`` of 0,
        ``sqrt`` of a negative value, a division by a vanishing norm), float16 overflow.

    Example:
        ```python
        model = Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), learning_rate=5.0))
        model.train(2, data, callbacks=[graphaudit.Watch()])
        ```

    Use instead:
        ```python
        model = Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), learning_rate=0.01))
        ```
    """
    record = ctx.need(TrainingRun).record
    bad = record.non_finite
    if bad is None:
        return
    skipped = record.loss_scaled and len(record.overflows) >= bad.step and record.overflows[bad.step - 1]
    if skipped:
        return
    names = list(dict.fromkeys(n for n in (bad.gradient, bad.weight) if n is not None))
    nodes = parameter_nodes(ctx, names)
    subjects = tuple(dict.fromkeys(names))
    if bad.forward is not None and bad.forward != "(the batch)":
        cell = g.cell_node(bad.forward)
        subjects = (bad.forward or "(root)", *subjects)
        nodes = (cell, *(n for n in nodes if n != g.cell_node(""))) if cell in ctx.graph else nodes
    cause = LossNotFinite(
        bad.step,
        bad.epoch,
        str(float(bad.loss)),
        None if bad.forward is None else bad.forward or "(root)",
        bad.tensor,
        bad.gradient,
        bad.weight,
        bad.forward_note,
    )
    yield ctx.finding(
        "error", subjects[0] if subjects else "(root)", cause, nodes, subjects=subjects or ("(root)",)
    )
