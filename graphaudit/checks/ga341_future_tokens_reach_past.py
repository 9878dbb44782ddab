"""GA341 future-tokens-reach-past."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.dependency import describe, judged_phrase, subject_and_nodes
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dependency import DependencyProbe, SequenceDependencies
from graphaudit.findings import Finding


def _encoder_hint(probe: DependencyProbe) -> str:
    """With one stack assumed, the changed tokens may be an encoder's: say how to name the decoder's input."""
    if probe.causal_input:
        return ""
    return (
        "; if the tokens changed feed an encoder, name the decoder's input (causal_input='decoder_input_ids')"
    )


@register(
    "GA341",
    "future-tokens-reach-past",
    severity="error",
    needs=(
        SequenceDependencies,
        DependencyProbe,
    ),
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
    if ctx.need(DependencyProbe).result.results["batch"].found:
        return  # the samples mix (GA340): what moves cannot be told apart; fix that first
    subject, nodes = subject_and_nodes(dependence)
    where = "the network's construct" if subject == "(root)" else f"'{subject}'"
    probe = ctx.need(DependencyProbe)
    cut = probe.result.cut
    yield ctx.finding(
        "error",
        subject,
        f"The model is causal ({probe.causal}), but {judged_phrase(dependence)} at positions "
        f"0..{cut} depends on {probe.tokens} after position {cut}: changing them moves it {describe(dependence)}. "
        f"The future first gets in at {where}.",
        f"Apply the causal mask in {where}: mask the scores of later positions before the softmax "
        "(masked_fill with a large negative value, or add a mask of 0 and -inf), for the sequence length of the "
        f"batch. If the model is not meant to be causal, pass causal=False{_encoder_hint(probe)}.",
        nodes,
    )
