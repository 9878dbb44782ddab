"""GA407 bounded-activation-before-logits-loss."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.activations import activation_name
from graphaudit.checks._shared.lossflow import FlaggedHeads, flagged, pairings
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.loss import LossTrace
from graphaudit.findings import Finding

# What each activation does to the logits a loss normalises itself.
_EFFECT = {
    "relu": "clips every negative logit to 0",
    "relu6": "clips the logits to [0, 6]",
    "tanh": "squeezes the logits into (-1, 1)",
    "hardtanh": "clips the logits to [-1, 1]",
    "softsign": "squeezes the logits into (-1, 1)",
    "sigmoid": "squeezes the logits into (0, 1)",
    "hsigmoid": "clips the logits to [0, 1]",
}


@dataclass(frozen=True)
class BoundedActivationBeforeLogitsLoss(FlaggedHeads):
    """The network's output made by a bounding activation (ReLU, tanh...), given to a loss that wants raw logits."""

    activation: str  # the activation's name ("relu", "tanh"...)
    expects: str  # what the loss normalises the logits with: "logits-softmax" or "logits-sigmoid"

    def message(self) -> str:
        relu = self.activation in ("relu", "relu6")
        consequence = (
            "sigmoid(score) is then at least 0.5: no sample can be predicted negative."
            if relu and self.expects == "logits-sigmoid"
            else "the loss can never become confident, and its gradients push the activation into saturation."
            if not relu
            else "every negative logit, and its gradient, is lost."
        )
        return (
            f"{self.output} made by a {self.activation} ({self.where}), which {_EFFECT[self.activation]}, but "
            f"{self.evidence}: {consequence}"
        )

    def fix(self) -> str:
        return (
            f"Remove the {self.activation} ({self.where}) so that the last layer outputs raw logits; apply any "
            "squashing only at inference."
        )


@register(
    "GA407",
    "bounded-activation-before-logits-loss",
    severity="error",
    also=("warning",),
    needs=(LossTrace,),
    causes=(BoundedActivationBeforeLogitsLoss,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A ReLU, tanh or sigmoid right before a loss that wants raw logits (CrossEntropyLoss, BCEWithLogitsLoss).

    What it does:
        Follows the network's output back through shape-only operations (as GA401-GA404 do)
        and reports the element-wise activation that made it when the loss normalises logits
        itself: a softmax cross-entropy (``nn.CrossEntropyLoss``,
        ``nn.SoftmaxCrossEntropyWithLogits``) or ``nn.BCEWithLogitsLoss``. An error for tanh,
        sigmoid, hard-tanh/-sigmoid and softsign before either loss, and for ReLU before
        ``BCEWithLogitsLoss``; a warning for ReLU / ReLU6 before a softmax cross-entropy. A
        sigmoid before ``BCEWithLogitsLoss`` is GA401's, a softmax before a cross-entropy
        GA403's.

    Why is this bad:
        The loss expects unbounded scores. Logits squeezed into (-1, 1) or (0, 1) can differ by
        at most 2 or 1, so the softmax can never be confident: with 10 classes and tanh the
        best probability reachable is e/(e + 9/e) ≈ 0.45, the loss never approaches 0 and the
        gradients keep pushing the activation into saturation. A ReLU gives
        ``BCEWithLogitsLoss`` only scores ≥ 0, so sigmoid(score) ≥ 0.5: no sample can be
        predicted negative. Before a softmax cross-entropy, a ReLU zeroes every negative logit
        and its gradient (dying units at the output). A wrong last-layer activation for the
        loss is a rule of NeuraLint (TOSEM'21) and UMLAUT (CHI'21); AutoTrainer (ICSE'21)
        repairs the dying-ReLU and saturation symptoms it causes during training.

    Example:
        ```python
        net = nn.SequentialCell([nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 10), nn.Tanh()])
        graphaudit.audit(net, optimizer, inputs=(x,), label=y, loss_fn=nn.CrossEntropyLoss())
        ```

    Use instead:
        ```python
        net = nn.SequentialCell([nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 10)])   # raw logits
        ```
    """
    found: dict[tuple[str, str, str], list] = {}
    for pairing in pairings(ctx):
        if pairing.expects not in ("logits-softmax", "logits-sigmoid"):
            continue
        name = activation_name(ctx.graph, pairing.activation_node)
        if name not in _EFFECT or (name == "sigmoid" and pairing.expects == "logits-sigmoid"):
            continue
        assert pairing.activation_node is not None
        found.setdefault((name, pairing.expects, pairing.evidence), []).append(pairing)
    for (name, expects, _), same in found.items():
        relu = name in ("relu", "relu6")
        severity = "warning" if relu and expects == "logits-softmax" else "error"
        for heads in flagged(ctx, same):
            cause = BoundedActivationBeforeLogitsLoss(
                **FlaggedHeads.facts(heads), activation=name, expects=expects
            )
            yield ctx.finding(severity, cause.loss, cause, heads.nodes)
