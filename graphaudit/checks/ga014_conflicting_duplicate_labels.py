"""GA014 conflicting-duplicate-labels."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors
from graphaudit.checks._shared.data_stats import label_format, row_hash
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample
from graphaudit.findings import Cause, Finding
from graphaudit.graph.pipeline import column_subject
from graphaudit.text import counted, listing

#: Values a row's inputs need before two identical rows are more than a coincidence (images, signals).
MIN_ELEMENTS = 64


def _labels(values: np.ndarray) -> list[str] | None:
    found = label_format(values)
    if found.kind == "index":
        return [str(int(v)) for v in values.reshape(len(values))]
    if found.kind == "one-hot":
        return [str(int(v)) for v in values.reshape(len(values), -1).argmax(axis=1)]
    return None


@dataclass(frozen=True)
class ConflictingDuplicateLabels(Cause):
    """Groups of identical training samples that carry different labels."""

    column: str  # the label column
    groups: tuple[tuple[int, ...], ...]  # each group's sampled rows
    labels: tuple[tuple[str, ...], ...]  # each group's labels, row by row
    sample: str  # what was sampled (the sample's description)

    def message(self) -> str:
        shown = listing(
            (
                "rows " + listing(f"{row} (label {label})" for row, label in zip(rows, labels))
                for rows, labels in zip(self.groups, self.labels)
            ),
            separator="; ",
        )
        n = len(self.groups)
        return (
            f"{counted(n, 'group')} of identical training samples {'carries' if n == 1 else 'carry'} different "
            f"labels in {self.column!r}: {shown} (sampled: {self.sample}). At most one label of each group is right."
        )

    def fix(self) -> str:
        return "Find the duplicated files or records and keep each sample once, with its right label."


@register(
    "GA014",
    "conflicting-duplicate-labels",
    severity="warning",
    needs=(DataSample,),
    once="one finding per training set: every conflicting duplicate is counted in it",
    causes=(ConflictingDuplicateLabels,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Identical samples that carry different labels: the data itself shows a label error.

    What it does:
        Hashes the inputs of every sampled training row (the bytes of all its feature
        columns) and reports, as one warning, the groups of identical rows whose class labels
        differ, with their sampled row numbers. Only rows of at least 64 values are compared
        (images, signals, embeddings): short tabular rows repeat by coincidence. Identical
        source samples behind random augmentation come out different and are not found; a
        sample sees only the rows it drew.

    Why is this bad:
        MindSpore's accuracy guide (§1.1, "wrong labels"): a wrong label is a special kind of
        outlier and particularly destructive to training; spot-check the data fed to the
        model to find such errors early. The same input cannot be two classes: one of the
        labels is wrong (a file copied into two class folders, a merge of two sources that
        label alike inputs differently), and the model is trained to contradict itself.

    Example:
        ```python
        # train/cat/img_0042.png and train/dog/img_0042.png are the same file
        train = ds.ImageFolderDataset("train/", decode=True)
        ```

    Use instead:
        ```python
        # remove the duplicate from the wrong folder (find them by hashing the files)
        ```
    """
    sampled = ctx.need(DataSample)
    sample, label = sampled.sample, sampled.label_column
    if label is None or not sampled.features:
        return
    values = sample.column(label)
    labels = _labels(values) if values is not None and values.size and values.dtype.kind in "biuf" else None
    columns = [sample.rows_of(c) for c in sampled.features]
    if labels is None or any(len(c) != len(labels) for c in columns):
        return
    if sum(np.asarray(c[0]).size for c in columns) < MIN_ELEMENTS:
        return
    groups: dict[str, list[int]] = {}
    for i in range(len(labels)):
        groups.setdefault(row_hash(*(c[i] for c in columns)), []).append(i)
    conflicts = [rows for rows in groups.values() if len({labels[i] for i in rows}) > 1]
    if not conflicts:
        return
    cause = ConflictingDuplicateLabels(
        label,
        tuple(tuple(rows) for rows in conflicts),
        tuple(tuple(labels[i] for i in rows) for rows in conflicts),
        sample.describe(),
    )
    yield ctx.finding(
        "warning",
        column_subject("train", label),
        cause,
        anchors(ctx, label=True),
        subjects=[column_subject("train", label), *(column_subject("train", c) for c in sampled.features)],
    )
