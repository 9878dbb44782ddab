"""GA012 constant-column."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors, feature_stats
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample
from graphaudit.findings import Finding
from graphaudit.graph.pipeline import column_subject

#: Sampled rows needed before a column that never changed is called constant.
MIN_ROWS = 8


@register(
    "GA012",
    "constant-column",
    severity="warning",
    needs=(DataSample,),
    once="one finding per data column: its constant channels are listed together",
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
            yield ctx.finding(
                "warning",
                subject,
                f"The column {column!r} holds the value {o.low:g} in every one of the {sample.rows} sampled rows "
                f"({sample.describe()}): it carries no information.",
                f"Check what produces {column!r} (a decode that failed, a path to one file, an empty CSV field) and "
                "fix it, or drop the column.",
                nodes,
            )
            continue
        flat = [i for i, c in enumerate(stats.channels) if c.low == c.high]
        if flat and sample.complete and stats.axis is not None:
            yield ctx.finding(
                "warning",
                subject,
                f"In the column {column!r}, {len(flat)} of {len(stats.channels)} channels (axis {stats.axis}) never "
                f"change over all {sample.rows} rows of one epoch: {flat[:8]}{' ...' if len(flat) > 8 else ''}.",
                "Drop the constant channels or features, or fix what fills them.",
                nodes,
            )
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
            f"Every one of the {sample.rows} training rows has the same label in {label!r}: the network can only "
            "learn to output it.",
            f"Check the source of {label!r} (one class folder, the wrong column).",
            anchors(ctx, label=True),
        )
