"""GA002 shuffle-buffer-too-small."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors
from graphaudit.checks._shared.data_pipeline import shuffling
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample, TrainingData
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing

#: A buffer holding less than this share of the rows it shuffles barely changes their order.
BUFFER_SHARE = 0.1


@dataclass(frozen=True)
class ShuffleBufferTooSmall(Cause):
    """A shuffle() whose buffer holds a small share of the rows its in-order sources read."""

    names_subjects = True
    path: str  # the shuffle() step
    rows: int  # the rows that reach it
    buffer: int  # its buffer_size
    sources: tuple[str, ...]  # the sources that read their rows in order, by path

    def message(self) -> str:
        return (
            f"{self.path} shuffles {self.rows} rows with a buffer of {self.buffer} ({self.buffer / self.rows:.1%} of "
            f"them), and the source ({listing(self.sources, None)}) reads them in order: each batch is drawn from a "
            f"window of about {self.buffer} consecutive rows, so the order barely changes from one epoch to the next."
        )

    def fix(self) -> str:
        return (
            f"Let the source shuffle (shuffle=True), or give {self.path} a buffer as large as the dataset "
            f"(shuffle({self.rows}))."
        )


@register(
    "GA002",
    "shuffle-buffer-too-small",
    severity="warning",
    needs=(TrainingData,),
    uses=(DataSample,),
    once="one finding per training pipeline: its shuffle() step, with the ordered sources it fails to mix",
    causes=(ShuffleBufferTooSmall,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A shuffle() whose buffer holds a small share of the rows, in a pipeline whose source reads them in order.

    What it does:
        When the training pipeline's only row shuffling is a ``shuffle(buffer_size)`` (its
        sources read their rows in order), compares the buffer with the number of rows that
        reach it (MindSpore's own count, when it can count without running the pipeline)
        and reports a warning when the buffer holds less than 10 % of them. A source that
        shuffles its rows itself makes any buffer enough; a pipeline of unknown length is
        not judged.

    Why is this bad:
        MindSpore's ``shuffle`` fills a buffer with the first ``buffer_size`` rows and emits a
        random one, refilling from the rows that follow: a row can move only about
        ``buffer_size`` places, and ``buffer_size`` equal to the number of rows is what a
        global shuffle takes (the ``Dataset.shuffle`` documentation). With 10 % or less, each
        batch is drawn from a narrow window of consecutive rows: with data stored by class, a
        window inside one class. MindSpore's accuracy guide (§1.2) names too little
        shuffling with no shuffling: the model sees nearly the same order every epoch. The
        10 % line is graphaudit's: a window that narrow leaves the order mostly as stored.

    Example:
        ```python
        train = ds.MindDataset("train.mindrecord", shuffle=False).shuffle(64).batch(32)  # 50,000 rows
        ```

    Use instead:
        ```python
        train = ds.MindDataset("train.mindrecord", shuffle=True).batch(32)  # or .shuffle(50_000)
        ```
    """
    data = ctx.need(TrainingData)
    found = shuffling(data.graph)
    if found.user_sampler or len(found.row_shufflers) != len(found.buffers) or not found.buffers:
        return
    node, buffer, rows = max(found.buffers, key=lambda b: b[1])
    if rows <= 0 or buffer >= BUFFER_SHARE * rows:
        return
    path = data.graph.nodes[node]["path"]
    sources = tuple(data.graph.nodes[n]["path"] for n, _ in found.ordered_sources)
    cause = ShuffleBufferTooSmall(path, int(rows), int(buffer), sources)
    yield ctx.finding("warning", path, cause, anchors(ctx), subjects=[path, *sources])
