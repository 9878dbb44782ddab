"""GA344 recurrent-layer-runs-over-batch."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.recurrent import RecurrentLayout
from graphaudit.findings import Cause, Finding
from graphaudit.text import is_are, listing, pronouns, shape_text


@dataclass(frozen=True)
class RecurrentLayerRunsOverBatch(Cause):
    """Time-major recurrent layers (batch_first=False) fed a tensor whose axis 0 is the batch."""

    layers: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]  # the shape of the sequence each was given
    batch: int  # the batch size
    why: str  # how the batch axis was told, in words ("the label's axis 0 (4)")

    def message(self) -> str:
        count = len(self.layers)
        which = "A time-major recurrent layer" if count == 1 else f"{count} time-major recurrent layers"
        names = listing(
            (f"'{path}' {shape_text(shape)}" for path, shape in zip(self.layers, self.shapes)),
            limit=None,
        )
        return (
            f"{which} (batch_first=False: reading (time, batch, features)) {is_are(count)} fed a tensor whose axis 0 "
            f"is the batch of {self.batch} ({self.why}): {names}. The recurrence runs over the samples, each "
            "sample's state starting from the previous one's, and the time steps are read as independent sequences."
        )

    def fix(self) -> str:
        return (
            f"Build {pronouns(len(self.layers)).object} with batch_first=True, or transpose the input to "
            "(time, batch, features) with x.swapaxes(0, 1) (and the output back)."
        )


@register(
    "GA344",
    "recurrent-layer-runs-over-batch",
    severity="error",
    needs=(RecurrentLayout,),
    once="one finding per network: every time-major layer fed a batch-major tensor is listed in it",
    causes=(RecurrentLayerRunsOverBatch,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A time-major recurrent layer (``batch_first=False``) is fed a ``(batch, time, ...)`` tensor.

    What it does:
        For every ``nn.LSTM``/``nn.GRU``/``nn.RNN`` with ``batch_first=False`` (MindSpore's
        default: it reads ``(time, batch, features)``), reads the shape of the sequence the
        traced pass gave it, and reports the layers whose input's axis 0 is the batch and axis
        1 is not, in one finding. Which size is the batch comes from what the audit was given, never from a
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
    misfed = [use for use in layout.uses if use.misfed and use.shape is not None]
    if not misfed:
        return
    batch = layout.batch
    cause = RecurrentLayerRunsOverBatch(
        tuple(u.path for u in misfed),
        tuple(tuple(int(d) for d in u.shape or ()) for u in misfed),
        int(batch.batch),
        batch.why,
    )
    yield ctx.finding(
        "error",
        misfed[0].path,
        cause,
        tuple(g.cell_node(u.path) for u in misfed),
        # The layers' own sub-cells are subjects too: the probe (GA340) names where the samples mix,
        # the cell inside the LSTM that runs the recurrence, and folds into this finding.
        subjects=[p for u in misfed for p in (u.path, *u.inner)],
    )
