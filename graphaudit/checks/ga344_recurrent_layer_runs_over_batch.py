"""GA344 recurrent-layer-runs-over-batch."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.recurrent import RecurrentLayout
from graphaudit.findings import Finding


@register(
    "GA344",
    "recurrent-layer-runs-over-batch",
    severity="error",
    needs=(RecurrentLayout,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A time-major recurrent layer (``batch_first=False``) is fed a ``(batch, time, ...)`` tensor.

    What it does:
        For every ``nn.LSTM``/``nn.GRU``/``nn.RNN`` with ``batch_first=False`` (MindSpore's
        default: it reads ``(time, batch, features)``), reads the shape of the sequence the
        traced pass gave it, and reports the layer when its axis 0 is the batch and its axis 1
        is not. Which size is the batch comes from what the audit was given, never from a
        guess: the label's axis 0 (``label=``), the training pipeline's batch size
        (``dataset=``), or a convolution reading the network's input (its axis 0 is the batch).
        When none says it, or the batch is as long as the sequence, the check says it did not
        run, and why. The dependency probe (GA340) then runs along that batch axis: a sound
        time-major network, its input ``(T, B, C)`` or transposed inside, is probed and silent.

    Why is this bad:
        The layer runs its recurrence along axis 0: over the samples of the batch. Each
        sample's hidden state starts from the previous sample's, and the "batch" it sees is
        the time steps of the sequence, each processed as an independent sequence of length B.
        Nothing raises (the shapes fit either way), the loss goes down a little, and the
        predictions change with the batch's order and size. It is the commonest bug of a
        recurrent model ported from PyTorch code written with ``batch_first=True``.

    Example:
        ```python
        self.lstm = nn.LSTM(32, 64)                  # batch_first=False: reads (T, B, C)

        def construct(self, tokens):                 # tokens: (B, T)
            out, _ = self.lstm(self.embed(tokens))   # fed (B, T, 32)
            return self.tag(out)
        ```

    Use instead:
        ```python
        self.lstm = nn.LSTM(32, 64, batch_first=True)   # reads (B, T, C)
        # or keep it time-major: out, _ = self.lstm(x.swapaxes(0, 1)); out = out.swapaxes(0, 1)
        ```
    """
    layout = ctx.need(RecurrentLayout).layout
    batch = layout.batch
    for use in layout.uses:
        if not use.misfed or use.shape is None:
            continue
        shown = f"({', '.join(str(d) for d in use.shape)})"
        yield ctx.finding(
            "error",
            use.path,
            f"'{use.path}' is a time-major recurrent layer (batch_first=False: it reads (time, batch, "
            f"features)), but it is fed {shown}, whose axis 0 is the batch of {batch.batch} ({batch.why}): "
            f"its recurrence runs over the samples, each sample's state starting from the previous one's, "
            f"and the {use.shape[1]} time steps are read as independent sequences.",
            f"Build '{use.path}' with batch_first=True, or transpose its input to (time, batch, features) "
            "with x.swapaxes(0, 1) (and its output back).",
            (g.cell_node(use.path),),
            # The layer's own sub-cells are subjects too: the probe (GA340) names where the samples
            # mix, the cell inside the LSTM that runs the recurrence, and folds into this finding.
            subjects=[use.path, *use.inner],
        )
