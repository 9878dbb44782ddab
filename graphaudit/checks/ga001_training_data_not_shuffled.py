"""GA001 training-data-not-shuffled."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors
from graphaudit.checks._shared.data_pipeline import describe_order, shuffling
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample, TrainingData
from graphaudit.findings import Cause, Finding
from graphaudit.text import clauses


@dataclass(frozen=True)
class RowsNeverShuffled(Cause):
    """No step of the training pipeline shuffles its rows (*single* set: the sampled batches show it)."""

    names_subjects = True
    sources: tuple[str, ...]  # the sources that read their rows in order, by path
    orders: tuple[str, ...]  # each one's shuffle mode ("none", "files"...), as describe_order() reads it
    after_batch: tuple[str, ...]  # the shuffle() steps that come after batch(), by path
    single: int | None = None  # the sampled batches that hold a single class each...
    batches: int | None = None  # ...of those sampled
    classes: int | None = None  # the classes seen in them

    def message(self) -> str:
        parts = [f"{path} {describe_order(mode)}" for path, mode in zip(self.sources, self.orders)]
        parts += [
            f"{path} comes after batch(), so it reorders whole batches of consecutive rows"
            for path in self.after_batch
        ]
        measured = ""
        if self.single is not None and self.batches is not None:
            measured = (
                f" The sampled batches show it: {_how_many(self.single, self.batches)} a single class, while "
                f"{self.classes} classes were seen: the rows are stored by class, and the network learns one class "
                "at a time."
            )
        return (
            f"No step of the training pipeline shuffles its rows: {clauses(parts)}. Every epoch feeds the "
            f"network the same sequence of batches.{measured}"
        )

    def fix(self) -> str:
        return (
            "Shuffle the rows before batching: pass shuffle=True to the source (its default), or add "
            ".shuffle(buffer_size) before .batch() with a buffer as large as the dataset."
        )


def _single_class_batches(ctx: AuditContext) -> tuple[int, int, int] | None:
    """``(single, batches, classes)`` when most sampled batches hold one class each: rows stored by class.

    *single* of the *batches* sampled hold one class each; that is most of them (two at least),
    they are of two classes or more (the first batches of one class alone do not tell a sorted
    set from one that starts with it), and a random order of the same rows would give a batch
    of one class less than half as often (an imbalanced set gives single-class batches by
    chance: 0.95 ** 8 = 66% of batches of 8 when one class holds 95% of the rows).
    """
    sampled = ctx.get(DataSample)
    if sampled is None or sampled.label_column is None or not sampled.sample.batched:
        return None
    batches = [
        np.asarray(b).reshape(len(b), -1) for b in sampled.sample.columns.get(sampled.label_column, [])
    ]
    # a last batch of one row holds one class whatever the order
    batches = [b for b in batches if len(b) >= 2]
    if len(batches) < 2:
        return None
    rows = [np.unique(b, axis=0) for b in batches]
    seen, counts = np.unique(np.concatenate(batches), axis=0, return_counts=True)
    single = [r for r in rows if len(r) == 1]
    if len(seen) < 2 or len(single) < 2 or 2 * len(single) <= len(batches):
        return None
    if len(np.unique(np.concatenate(single), axis=0)) < 2:
        return None
    share = counts / counts.sum()
    by_chance = sum(float(np.sum(share ** len(b))) for b in batches)  # expected single-class batches
    if 2 * by_chance >= len(single):
        return None
    return len(single), len(batches), len(seen)


@register(
    "GA001",
    "training-data-not-shuffled",
    severity="error",
    also=("warning",),
    needs=(TrainingData,),
    uses=(DataSample,),
    once="one finding per training pipeline: every source read in order and every step after batch() is listed in it",
    causes=(RowsNeverShuffled,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A training pipeline in which no step shuffles the rows: every epoch sees them in the same order.

    What it does:
        Reads the training pipeline (``dataset=``) and looks for a step that puts its rows
        in a random order before they are batched: a source that shuffles (``shuffle=True``,
        the default of the mappable sources, a ``RandomSampler``, ``DistributedSampler(shuffle=True)``,
        ``Shuffle.GLOBAL`` / ``INFILE`` / ``PARTIAL`` / ``ADAPTIVE`` for file sources) or a
        ``shuffle()`` before ``batch()``; ``Shuffle.FILES`` only reorders whole files and a
        ``shuffle()`` after ``batch()`` only reorders whole batches, so neither counts. When
        there is none, it names each source and how it orders its rows: an error when the
        sampled batches show the damage (most of them, two or more, each of a single class,
        of several classes between them, and far more often than a random order of the same
        rows would give: data stored by class, the common case), a warning otherwise (the rows
        may have been stored in a random order). A user-written sampler is trusted.

    Why is this bad:
        MindSpore's accuracy guide (§1.2, "no shuffle"): without shuffling, or with too
        little, the model is always updated in the same data order, which sharply limits the
        directions gradient descent can take, leaves fewer points to converge to, and makes
        overfitting likely. Data stored by class (an ``ImageFolderDataset`` read in order
        yields every image of the first folder, then of the second...) is worse: each batch
        holds one class and the model forgets the previous class at every step.

    Example:
        ```python
        train = ds.ImageFolderDataset("train/", shuffle=False).map(ops, "image").batch(32)
        ```

    Use instead:
        ```python
        train = ds.ImageFolderDataset("train/", shuffle=True).map(ops, "image").batch(32)
        # or, for a source that cannot shuffle: .shuffle(buffer_size=<number of rows>) before .batch()
        ```

        Data already stored in a random order still benefits from a new order each epoch.
    """
    data = ctx.need(TrainingData)
    found = shuffling(data.graph)
    if found.shuffled:
        return
    graph = data.graph
    sources = tuple(graph.nodes[n]["path"] for n, _ in found.ordered_sources)
    after_batch = tuple(graph.nodes[n]["path"] for n in found.after_batch)
    proof = _single_class_batches(ctx)
    cause = RowsNeverShuffled(
        sources, tuple(mode for _, mode in found.ordered_sources), after_batch, *(proof or (None, None, None))
    )
    subjects = [*sources, *after_batch]
    yield ctx.finding("error" if proof else "warning", subjects[0], cause, anchors(ctx), subjects=subjects)


def _how_many(single: int, batches: int) -> str:
    """Which of the sampled batches hold one class, in words.

    Example:
        >>> _how_many(4, 6), _how_many(3, 3)
        ('4 of the first 6 batches each hold', 'each of the first 3 batches holds')
    """
    if single == batches:
        return f"each of the first {batches} batches holds"
    return f"{single} of the first {batches} batches each hold"
