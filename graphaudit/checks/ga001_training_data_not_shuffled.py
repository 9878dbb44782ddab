"""GA001 training-data-not-shuffled."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors
from graphaudit.checks._shared.data_pipeline import describe_order, shuffling
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample, TrainingData
from graphaudit.findings import Finding


def _single_class_batches(ctx: AuditContext) -> tuple[int, int] | None:
    """``(batches, classes)`` when every sampled batch holds one class although several were seen."""
    sampled = ctx.get(DataSample)
    if sampled is None or sampled.label_column is None or not sampled.sample.batched:
        return None
    batches = [
        np.asarray(b).reshape(len(b), -1) for b in sampled.sample.columns.get(sampled.label_column, [])
    ]
    if len(batches) < 2 or any(len(b) < 2 for b in batches):
        return None
    rows = [np.unique(b, axis=0) for b in batches]
    seen = np.unique(np.concatenate(batches), axis=0)
    if all(len(r) == 1 for r in rows) and len(seen) > 1:
        return len(batches), len(seen)
    return None


@register(
    "GA001",
    "training-data-not-shuffled",
    severity="error",
    also=("warning",),
    needs=(TrainingData,),
    uses=(DataSample,),
    once="one finding per training pipeline: every source read in order and every step after batch() is listed in it",
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
        sampled batches show the damage (two or more batches, each of a single class, while
        the sample holds several classes: data stored by class, the common case), a warning
        otherwise (the rows may have been stored in a random order). A user-written sampler
        is trusted.

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
    subjects = [graph.nodes[n]["path"] for n, _ in found.ordered_sources] + [
        graph.nodes[n]["path"] for n in found.after_batch
    ]
    parts = [f"{graph.nodes[n]['path']} {describe_order(mode)}" for n, mode in found.ordered_sources]
    parts += [
        f"{graph.nodes[n]['path']} comes after batch(), so it reorders whole batches of consecutive rows"
        for n in found.after_batch
    ]
    proof = _single_class_batches(ctx)
    severity = "error" if proof else "warning"
    measured = ""
    if proof:
        measured = (
            f" The sampled batches show it: each of the first {proof[0]} batches holds a single class, "
            f"while {proof[1]} classes were seen."
        )
    yield ctx.finding(
        severity,
        subjects[0],
        f"No step of the training pipeline shuffles its rows: {'; '.join(parts)}. Every epoch feeds the "
        f"network the same sequence of batches.{measured}",
        "Shuffle the rows before batching: pass shuffle=True to the source (its default), or add "
        ".shuffle(buffer_size) before .batch() with a buffer as large as the dataset.",
        anchors(ctx),
        subjects=subjects,
    )
