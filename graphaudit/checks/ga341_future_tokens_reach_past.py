"""GA341 future-tokens-reach-past."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.dependency import MIXING, moved, subject_and_nodes, where, whose_output
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dependency import DependencyProbe, SequenceDependencies
from graphaudit.findings import Cause, Finding


@dataclass(frozen=True)
class FutureTokensReachPast(Cause):
    """A causal model's output at a position moves when tokens after it change."""

    entry: (
        str  # the first cell whose output moves while its inputs do not ("(root)": the network's construct)
    )
    causal: str  # why the model is taken to be causal
    judged: str  # the cell whose output was judged ("": the network's)
    cut: int  # the last position judged; the tokens after it were changed
    tokens: str  # the tokens changed, in words (the probe's: "the tokens of decoder_input_ids")
    causal_input: str  # the input the probe changed, when named ("": one stack assumed)
    change: float  # how far the outputs moved, relative to their largest value
    tolerance: float  # the bound (relative) below which nothing moved

    def message(self) -> str:
        return (
            f"The model is causal ({self.causal}), but {whose_output(self.judged)} at positions 0..{self.cut} "
            f"depends on {self.tokens} after position {self.cut}: changing them moves it "
            f"{moved(self.change, self.tolerance)}. The future first gets in at {where(self.entry)}."
        )

    def fix(self) -> str:
        # With one stack assumed, the changed tokens may be an encoder's: say how to name the decoder's input.
        hint = (
            ""
            if self.causal_input
            else "; if the tokens changed feed an encoder, name the decoder's input (causal_input='decoder_input_ids')"
        )
        return (
            f"Apply the causal mask in {where(self.entry)}: mask the scores of later positions before the softmax "
            "(masked_fill with a large negative value, or add a mask of 0 and -inf), for the sequence length of the "
            f"batch. If the model is not meant to be causal, pass causal=False{hint}."
        )


@register(
    "GA341",
    "future-tokens-reach-past",
    severity="error",
    needs=(
        SequenceDependencies,
        DependencyProbe,
    ),
    causes=(FutureTokensReachPast,),
    defers_to={"GA340": MIXING},
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A causal model's output at a position depends on tokens after it.

    What it does:
        For a causal model (``causal=True``, or a recognisable ``*ForCausalLM``), changes the
        tokens after the middle of a sequence, in inference mode, and reports when the
        outputs at or before the middle move beyond the run-to-run noise of the same pass.
        It names the first cell whose output moves while its inputs do not: where the
        future gets in. In an encoder-decoder (T5, BART, Whisper... recognised, or
        ``causal_input="decoder_input_ids"``) only the decoder's input is changed, and only
        the outputs the decoder makes are judged: every decoder position may read every
        encoder token.
        Not reported when GA340 finds the samples mixing: what moved cannot be told apart
        then; fix that first.

    Why is this bad:
        A decoder whose attention mask was dropped, built for another length, or added where
        it should have been multiplied sees the token it must predict: the training loss
        looks excellent, and generation (which has no future to look at) is garbage.

    Example:
        ```python
        scores = ops.matmul(q, k.swapaxes(-1, -2)) / math.sqrt(d)
        weights = ops.softmax(scores, axis=-1)         # the causal mask is never applied
        ```

    Use instead:
        ```python
        future = Tensor(np.triu(np.ones((t, t), np.bool_), 1))
        weights = ops.softmax(ops.masked_fill(scores, future, -1e4), axis=-1)
        ```
    """
    dependence = ctx.need(SequenceDependencies).future
    if not dependence.found:
        return
    subject, nodes = subject_and_nodes(dependence)
    probe = ctx.need(DependencyProbe)
    cause = FutureTokensReachPast(
        subject,
        str(probe.causal),
        dependence.judged,
        int(probe.result.cut),
        probe.tokens,
        probe.causal_input,
        float(dependence.change),
        float(dependence.tolerance),
    )
    yield ctx.finding("error", subject, cause, nodes)
