"""GA309 saturating-hidden-activations."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.saturation import DEPTH, Chain, saturating_chains
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing

#: Sigmoid hidden activations after convolutions from which a conv trunk is a warning (one alone: info).
CONV_SIGMOIDS = 2


@dataclass(frozen=True)
class SaturatingChain(Cause):
    """A stack of weight layers joined by sigmoid or tanh activations, with no normalisation or residual path."""

    layers: tuple[str, ...]  # the weight layers' paths, in the order the data flow through them
    activations: int  # how many saturating activations join them
    kinds: tuple[str, ...]  # which: "sigmoid", "tanh", each once, sorted

    def message(self) -> str:
        first, last = self.layers[0], self.layers[-1]
        return (
            f"{len(self.layers)} weight layers, from '{first}' to '{last}', are joined by {self.activations} "
            f"{listing(self.kinds, None)} activations with no normalisation or residual path between them: the "
            f"gradient reaching '{first}' is multiplied by one saturating derivative per layer and vanishes."
        )

    def fix(self) -> str:
        return (
            "Use ReLU-like hidden activations (nn.ReLU, nn.GELU), or keep the sigmoid/tanh and add a normalisation "
            "(nn.BatchNorm1d, nn.LayerNorm) before each, or residual connections."
        )


@dataclass(frozen=True)
class SigmoidAfterConvolution(Cause):
    """Convolutions of a (shorter) chain whose hidden activation is a sigmoid: a conv trunk with sigmoid units."""

    convolutions: tuple[str, ...]  # the convolutions followed by a sigmoid
    layers: tuple[str, ...]  # every weight layer of their chain

    def message(self) -> str:
        many = len(self.convolutions) > 1
        shown = listing([f"'{path}'" for path in self.convolutions])
        return (
            f"The convolution{'s' if many else ''} {shown} use{'' if many else 's'} a "
            "sigmoid as hidden activation: its outputs are all positive and its derivative at most 1/4 at every "
            "position of the map, so the layers before it learn slowly or not at all."
        )

    def fix(self) -> str:
        return "Use nn.ReLU (or GELU/SiLU) after the convolutions; keep sigmoids for gates and for a binary output."


@register(
    "GA309",
    "saturating-hidden-activations",
    severity="warning",
    also=("info",),
    needs=(TracedPass,),
    causes=(SaturatingChain, SigmoidAfterConvolution),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Sigmoid or tanh as the hidden activation of a deep stack with no normalisation or residual path.

    What it does:
        Finds, in the traced pass, chains of weight layers (``Dense`` / convolutions) in which
        each layer's output goes through a sigmoid or a tanh (``nn.Sigmoid``, ``nn.Tanh``,
        ``Dense(activation="sigmoid")``, ``ops.tanh``...) straight into the next layer — through
        shape operations and poolings only, so a conv trunk ``conv → sigmoid → max pool → conv``
        is a chain as a dense stack is — and reports a warning for a chain of 4 such hidden activations
        or more (a stack of 5 weight layers). A normalisation (BatchNorm, LayerNorm...), a
        residual addition or a gate (``x * sigmoid(g)``: squeeze-and-excitation, LSTM/GRU
        gates) between two layers breaks the chain: those are the designs that keep saturating
        units trainable, and they are not reported. In a convolution trunk the sigmoid is judged
        from fewer layers: 2 sigmoid hidden activations after convolutions in one chain are a
        warning, a single one info (``Conv2D(32, 3, activation="sigmoid")`` in a Keras port); a
        tanh trunk keeps the depth of 4 (the classic tanh LeNet-5). When ``probe=True`` runs a
        training step, GA310 confirms the finding from the per-layer gradient norms.

    Why is this bad:
        The derivative of a sigmoid is at most 1/4 and that of a tanh at most 1, and both fall
        towards 0 as the units saturate: the gradient reaching the first layer is multiplied by
        one such factor per layer and by the weights, and vanishes (Glorot & Bengio, AISTATS
        2010, saw the top hidden layer of a sigmoid network saturate with 4 and 5 hidden
        layers). The first layers stop learning while the loss still moves. Vanishing gradients
        and saturated activations are symptoms that AutoTrainer (ICSE'21) and DeepDiagnosis
        (ICSE'22) detect while training and repair by replacing the activation (ReLU) or adding
        BatchNorm; this rule finds their cause before training. The depth, 4 saturating hidden
        layers, is graphaudit's choice, from Glorot & Bengio's setting: shallower sigmoid/tanh
        MLPs (a 2-layer tanh policy network) train well and are not reported. A sigmoid after a
        convolution is worse than in a dense stack: its outputs are all positive (not centred,
        LeCun et al., "Efficient BackProp", 1998), every one of the many positions of a map
        saturates, and no CNN since AlexNet (Krizhevsky et al. 2012: ReLU trains several times
        faster) uses it as a hidden activation outside gates: Theia (arXiv:2412.05775) reports
        it from one layer.

    Example:
        ```python
        layers = []
        for _ in range(6):
            layers += [nn.Dense(64, 64), nn.Sigmoid()]
        net = nn.SequentialCell([*layers, nn.Dense(64, 10)])
        ```

    Use instead:
        ```python
        layers = []
        for _ in range(6):
            layers += [nn.Dense(64, 64), nn.ReLU()]        # or keep the sigmoid and add nn.BatchNorm1d(64)
        net = nn.SequentialCell([*layers, nn.Dense(64, 10)])
        ```
    """
    for chain in saturating_chains(ctx):
        if len(chain.activations) < DEPTH:
            yield from _conv_sigmoids(ctx, chain)
            continue
        cause = SaturatingChain(tuple(chain.paths), len(chain.activations), tuple(sorted(set(chain.names))))
        yield ctx.finding(
            "warning",
            chain.layers[0].path,
            cause,
            [*chain.activations, *(layer.call for layer in chain.layers)],
            subjects=chain.paths,
        )


def _conv_sigmoids(ctx: AuditContext, chain: Chain) -> Iterator[Finding]:
    """A shorter chain whose sigmoids follow convolutions: a conv trunk with sigmoid hidden units."""
    after_conv = [
        (layer, act)
        for layer, act, name in zip(chain.layers, chain.activations, chain.names)
        if name == "sigmoid" and layer.kind == "conv"
    ]
    if not after_conv:
        return
    severity = "warning" if len(after_conv) >= CONV_SIGMOIDS else "info"
    cause = SigmoidAfterConvolution(tuple(layer.path for layer, _ in after_conv), tuple(chain.paths))
    yield ctx.finding(
        severity,
        after_conv[0][0].path,
        cause,
        [act for _, act in after_conv] + [layer.call for layer in chain.layers],
        subjects=chain.paths,
    )
