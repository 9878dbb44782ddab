"""GA054 label-shape-broadcasts."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from graphaudit.checks import register
from graphaudit.checks._shared.input_labels import ROW_FORMATS, loss_target, read_label
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.label import GivenLabel
from graphaudit.evidence.loss import LossTrace
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing


def _ints(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(d) for d in shape)


@dataclass(frozen=True)
class LabelBroadcastsAcrossBatch(Cause):
    """A label that broadcasts with the output to a larger shape: every prediction against every label."""

    loss: str  # the loss's name
    output: tuple[int, ...]  # the output's shape
    label: tuple[int, ...]  # the label's shape
    combined: tuple[int, ...]  # the shape they broadcast to

    def message(self) -> str:
        return (
            f"{self.loss} compares the output of shape {list(self.output)} with a label of shape {list(self.label)}: "
            f"they broadcast to {list(self.combined)}, so every prediction is compared with every label of the batch, "
            "not with its own."
        )

    def fix(self) -> str:
        return (
            "Give the label the output's shape (y.reshape(output_shape)), or squeeze the output's unit axis."
        )


@dataclass(frozen=True)
class LabelBroadcastAlongAxes(Cause):
    """A label broadcast along axes of the output: the output values of such an axis share one target."""

    loss: str  # the loss's name
    output: tuple[int, ...]  # the output's shape
    label: tuple[int, ...]  # the label's shape
    axes: tuple[int, ...]  # the output's axes the label is broadcast along

    def message(self) -> str:
        return (
            f"{self.loss} compares the output of shape {list(self.output)} with a label of shape {list(self.label)}: "
            f"the label is broadcast along {'axis' if len(self.axes) == 1 else 'axes'} {listing(self.axes, None)} of the output, so all "
            f"{self.output[self.axes[0]]} output values of that axis are fitted to the same target."
        )

    def fix(self) -> str:
        padded = (1,) * (len(self.output) - len(self.label)) + self.label
        return (
            "Give one target per output value (a label of the output's shape), or make the head output what the "
            f"label holds (a width of {padded[self.axes[-1]]} along axis {self.axes[-1]})."
        )


@register(
    "GA054",
    "label-shape-broadcasts",
    severity="error",
    needs=(LossTrace, GivenLabel),
    once="one finding per loss: its output and its label",
    causes=(
        LabelBroadcastsAcrossBatch,
        LabelBroadcastAlongAxes,
    ),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """An element-wise loss whose output and label broadcast to a larger shape: (N, 1) against (N,) is (N, N).

    What it does:
        For an element-wise loss of MindSpore (a regression loss or a binary cross-entropy; a
        custom cell may reshape both arguments) whose traced run succeeded, compares the shape of the network's first output with the label's: when they
        differ and broadcasting them gives a shape that is not the output's (``(N, 1)`` and
        ``(N,)`` give ``(N, N)``), or the label is broadcast over an axis of the output (an
        ``(N, 1)`` label against an ``(N, 3)`` output), reports an error. (Losses that refuse
        to broadcast, such as ``BCEWithLogitsLoss`` or ``SmoothL1Loss`` on MindSpore 2.10,
        raise instead: GA060.)
        Rows of classes of another width than the output's are GA053's cause.

    Why is this bad:
        The loss compares every prediction with every label of the batch, not each with its
        own: the mean over the ``N x N`` grid pulls every prediction to the batch's mean label.
        Nothing fails; the model learns the mean. A label broadcast over the output's columns
        fits every column to the same target: a 3-output regressor trained on one target
        column learns three copies of it. On MindSpore 2.10 ``nn.MSELoss()`` on
        ``(4, 1)`` and ``(4,)`` returns a finite number. It is a tensor-compatibility bug of the
        kind NeuraLint (TOSEM'21) checks statically, found here on the real shapes.

    Example:
        ```python
        net = nn.SequentialCell([nn.Dense(8, 16), nn.ReLU(), nn.Dense(16, 1)])   # (N, 1)
        y = Tensor(prices)                                                        # (N,)
        graphaudit.audit(net, optimizer, inputs=(x,), label=y, loss_fn=nn.MSELoss())
        ```

    Use instead:
        ```python
        y = Tensor(prices.reshape(-1, 1))          # or squeeze the output: self.head(x).squeeze(-1)
        ```
    """
    reading = read_label(ctx)
    target = loss_target(ctx)
    loss = ctx.need(LossTrace)
    if (
        reading is None
        or target is None
        or target.family not in ("regression", "bce", "divergence")
        or loss.graph is None
    ):
        return
    if not target.builtin:
        return  # a custom loss cell may reshape both (logits.reshape(-1)): only MindSpore's losses are sure
    output, label = reading.output_shape, tuple(reading.values.shape)
    if output == label:
        return
    if len(label) == len(output) == 2 and label[1] >= 2 and reading.format.kind in ROW_FORMATS:
        return  # rows of classes of another width: the output's width is wrong, not the label's shape
    try:
        combined = tuple(np.broadcast_shapes(output, label))
    except ValueError:
        return  # the loss cannot run on these: it raises, loudly
    if combined != output:
        cause = LabelBroadcastsAcrossBatch(target.name, _ints(output), _ints(label), _ints(combined))
        yield ctx.finding("error", "label", cause, ["output:0"])
        return
    padded = (1,) * (len(output) - len(label)) + label
    spread = [axis for axis, (o, y) in enumerate(zip(output, padded)) if y == 1 and o > 1]
    cause = LabelBroadcastAlongAxes(target.name, _ints(output), _ints(label), tuple(spread))
    yield ctx.finding("error", "label", cause, ["output:0"])
