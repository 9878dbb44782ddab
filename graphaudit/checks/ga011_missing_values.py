"""GA011 missing-values."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample
from graphaudit.findings import Finding
from graphaudit.graph.pipeline import column_subject


@register(
    "GA011",
    "missing-values",
    severity="error",
    also=("warning",),
    needs=(DataSample,),
    once="one finding per data column and kind of bad value: each column is read and filled on its own",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """NaN or Inf in the sampled data (error), or the declared missing-value marker (warning).

    What it does:
        Counts, in every numeric column of the sampled training batches (the label
        included), the NaN and infinite values (an error) and, with ``missing_value=``
        (``--missing-value``), the entries equal to that marker (a warning: the marker was
        declared, so it may be handled on purpose). The message gives the counts and the
        number of rows affected.

    Why is this bad:
        MindSpore's accuracy guide (§1.1, "too many missing values"): missing values make the
        model learn wrong relations in the data; rows with missing values should be removed
        or given a sensible default. A NaN that reaches the network makes the loss NaN at
        that step and, through the update, every weight NaN from then on.

    Example:
        ```python
        train = ds.CSVDataset("train.csv", column_defaults=[float("nan"), 0.0, 0])  # empty fields become NaN
        ```

    Use instead:
        ```python
        train = ds.CSVDataset("train.csv", column_defaults=[0.0, 0.0, 0])  # or clean the file first
        ```
    """
    sampled = ctx.need(DataSample)
    sample = sampled.sample
    marker = sampled.missing_value
    for column in sample.columns:
        rows = sample.rows_of(column)
        if not rows or rows[0].dtype.kind not in "biuf":
            continue
        bad_nan = [int(np.isnan(r).sum()) if r.dtype.kind == "f" else 0 for r in rows]
        bad_inf = [int(np.isinf(r).sum()) if r.dtype.kind == "f" else 0 for r in rows]
        marked = [int((r == marker).sum()) for r in rows] if marker is not None else [0] * len(rows)
        subject = column_subject("train", column)
        is_label = column == sampled.label_column
        nodes = anchors(ctx, column=None if is_label else column, label=is_label)
        if sum(bad_nan) or sum(bad_inf):
            affected = sum(1 for a, b in zip(bad_nan, bad_inf) if a or b)
            yield ctx.finding(
                "error",
                subject,
                f"The column {column!r} holds {sum(bad_nan)} NaN and {sum(bad_inf)} infinite values, in {affected} "
                f"of {len(rows)} sampled rows ({sample.describe()}). The first one to reach the network makes "
                "the loss NaN.",
                f"Remove the rows with missing values, or fill them with a sensible default (CSV column_defaults, "
                f"a map over {column!r}), before training.",
                nodes,
            )
        elif sum(marked):
            affected = sum(1 for m in marked if m)
            yield ctx.finding(
                "warning",
                subject,
                f"The column {column!r} holds the missing-value marker {marker:g} {sum(marked)} times, in {affected} "
                f"of {len(rows)} sampled rows ({sample.describe()}): the network trains on it as if it were a value.",
                f"Remove the rows holding {marker:g}, or replace it with a sensible default, before training.",
                nodes,
            )
