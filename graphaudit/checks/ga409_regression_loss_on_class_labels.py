"""GA409 regression-loss-on-class-labels."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.input_labels import loss_target, read_label
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.label import GivenLabel
from graphaudit.evidence.loss import LossTrace
from graphaudit.findings import Cause, Finding


@dataclass(frozen=True)
class RegressionLossOnOneHot(Cause):
    """A regression loss trained on one-hot class labels."""

    loss: str  # the loss cell's class name
    classes: int  # the width of the one-hot rows

    def message(self) -> str:
        return (
            f"{self.loss} is a regression loss, but the label is one-hot rows over {self.classes} classes: a "
            "classification trained as a regression learns slowly, and its gradient vanishes when a confident "
            "prediction is wrong."
        )

    def fix(self) -> str:
        return (
            "Train the logits with nn.CrossEntropyLoss() and class-index labels (nn.BCEWithLogitsLoss() for "
            "multi-label targets)."
        )


@register(
    "GA409",
    "regression-loss-on-class-labels",
    severity="warning",
    needs=(LossTrace, GivenLabel),
    causes=(RegressionLossOnOneHot,),
    once="one finding per loss: the loss and the class labels it is given",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A regression loss (MSE, L1, SmoothL1) trained on one-hot class labels.

    What it does:
        Reports a warning when the loss is an element-wise regression loss of MindSpore
        (``nn.MSELoss``, ``nn.L1Loss``, ``nn.SmoothL1Loss``, ``nn.HuberLoss``, ``nn.RMSELoss``,
        ``nn.MAELoss``) and the label given with the traced batch is one-hot rows (every row one
        1 and zeros) of two classes or more, shaped as the output.

    Why is this bad:
        Class probabilities regressed with a squared or absolute error learn slowly: after a
        softmax or sigmoid the gradient of the MSE vanishes exactly when the prediction is
        confidently wrong (it carries the activation's derivative, which the cross-entropy
        cancels), and an L1 loss pushes scores to 0 or 1 with a constant step. The network
        trains, to a worse accuracy. Choosing the loss by the task is one of NeuraLint's
        (TOSEM'21) loss rules and of UMLAUT's (CHI'21) heuristics. Probability targets (label
        smoothing, distillation) are not one-hot and are not reported.

    Example:
        ```python
        y = Tensor(np.eye(10, dtype=np.float32)[digits])
        graphaudit.audit(net, optimizer, inputs=(x,), label=y, loss_fn=nn.MSELoss())
        ```

    Use instead:
        ```python
        graphaudit.audit(net, optimizer, inputs=(x,), label=Tensor(digits.astype(np.int32)),
                         loss_fn=nn.CrossEntropyLoss())
        ```
    """
    reading = read_label(ctx)
    target = loss_target(ctx)
    if reading is None or target is None or target.family != "regression" or reading.role != "dense":
        return
    values = reading.values
    if values.ndim != 2 or values.shape[1] < 2 or reading.format.kind != "one-hot" or reading.rows < 2:
        return
    cause = RegressionLossOnOneHot(target.name, int(values.shape[1]))
    yield ctx.finding("warning", target.name, cause, ["output:0"])
