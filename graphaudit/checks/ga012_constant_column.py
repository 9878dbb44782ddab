"""GA012 constant-column."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors, feature_stats
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample
from graphaudit.findings import Cause, Finding
from graphaudit.graph.pipeline import column_subject
from graphaudit.text import listing

#: Sampled rows needed before a column that never changed is called constant.
MIN_ROWS = 8


@dataclass(frozen=True)
class ConstantColumn(Cause):
    """A feature column that holds one value in every sampled row."""

    column: str
    value: float
    rows: int  # the sampled rows
    sample: str  # what was sampled (the sample's description)

    def message(self) -> str:
        return (
            f"The column {self.column!r} holds the value {self.value:g} in every one of the {self.rows} sampled rows "
            f"({self.sample}): it carries no information."
        )

    def fix(self) -> str:
        return (
            f"Check what produces {self.column!r} (a decode that failed, a path to one file, an empty CSV field) and "
            "fix it, or drop the column."
        )


@dataclass(frozen=True)
class ConstantChannels(Cause):
    """Channels (or features) of a column that never change over a whole epoch."""

    column: str
    channels: tuple[int, ...]  # the constant channels' indices
    of: int  # the column's channels
    axis: int  # the channel axis
    rows: int  # the rows of the epoch

    def message(self) -> str:
        return (
            f"In the column {self.column!r}, {len(self.channels)} of {self.of} channels (axis {self.axis}) never "
            f"change over all {self.rows} rows of one epoch: {listing(self.channels)}."
        )

    def fix(self) -> str:
        return "Drop the constant channels or features, or fix what fills them."


@dataclass(frozen=True)
class SingleLabel(Cause):
    """Every training row of one epoch has the same label."""

    column: str
    rows: int  # the rows of the epoch

    def message(self) -> str:
        return (
            f"Every one of the {self.rows} training rows has the same label in {self.column!r}: the network can only "
            "learn to output it."
        )

    def fix(self) -> str:
        return f"Check the source of {self.column!r} (one class folder, the wrong column)."


@register(
    "GA012",
    "constant-column",
    severity="warning",
    needs=(DataSample,),
    once="one finding per data column: its constant channels are listed together",
    causes=(
        ConstantColumn,
        ConstantChannels,
        SingleLabel,
    ),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A column (or one channel of it) whose value never changes across the sampled rows.

    What it does:
        Reports, as a warning, each feature column whose values are the same in every
        sampled training row (at least 8 rows): an image column that is all zeros, a feature
        that is always 1. When every row of one epoch was sampled it also reports single
        constant channels or features of a varying column (an alpha channel that is always
        255, a CSV feature column filled with its default) and a label column with a single
        class.

    Why is this bad:
        A constant input carries no information, and usually reveals a bug upstream: images
        that failed to decode into zeros, a path that points every row at one file, a CSV
        column that is empty and filled with its default, a label column read from the wrong
        field. MindSpore's accuracy guide (§1.1, missing values and wrong labels) asks to
        check the data that reaches the model; a standardisation of a constant feature
        divides by a zero standard deviation.

    Example:
        ```python
        train = ds.CSVDataset("train.csv", column_defaults=[0.0, 0.0, 0], column_names=["age", "income", "label"])
        # the file's "income" field is empty in every row
        ```

    Use instead:
        ```python
        # read the right field, fix the file, or drop the column: .project(["age", "label"])
        ```
    """
    sampled = ctx.need(DataSample)
    sample = sampled.sample
    if sample.rows < MIN_ROWS:
        return
    for column, stats in feature_stats(ctx).items():
        subject = column_subject("train", column)
        nodes = anchors(ctx, column=column)
        o = stats.overall
        if stats.count and o.low == o.high:
            cause = ConstantColumn(column, float(o.low), sample.rows, sample.describe())
            yield ctx.finding("warning", subject, cause, nodes)
            continue
        flat = [i for i, c in enumerate(stats.channels) if c.low == c.high]
        if flat and sample.complete and stats.axis is not None:
            cause = ConstantChannels(column, tuple(flat), len(stats.channels), stats.axis, sample.rows)
            yield ctx.finding("warning", subject, cause, nodes)
    label = sampled.label_column
    values = sample.column(label) if label else None
    if (
        sample.complete
        and values is not None
        and values.size
        and len(np.unique(values.reshape(len(values), -1), axis=0)) == 1
    ):
        yield ctx.finding(
            "warning",
            column_subject("train", label),
            SingleLabel(label, sample.rows),
            anchors(ctx, label=True),
        )
