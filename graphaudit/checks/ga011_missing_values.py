"""GA011 missing-values."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample
from graphaudit.findings import Cause, Finding
from graphaudit.graph.pipeline import column_subject


@dataclass(frozen=True)
class NonFiniteValues(Cause):
    """NaN or infinite values in a sampled column."""

    column: str
    nan: int  # the NaN values
    inf: int  # the infinite values
    affected: int  # the sampled rows holding any
    rows: int  # the sampled rows
    sample: str  # what was sampled (the sample's description)

    def message(self) -> str:
        return (
            f"The column {self.column!r} holds {self.nan} NaN and {self.inf} infinite values, in {self.affected} "
            f"of {self.rows} sampled rows ({self.sample}). The first one to reach the network makes the loss NaN."
        )

    def fix(self) -> str:
        return (
            "Remove the rows with missing values, or fill them with a sensible default (CSV column_defaults, "
            f"a map over {self.column!r}), before training."
        )


@dataclass(frozen=True)
class MissingValueMarkers(Cause):
    """The declared missing-value marker in a sampled column, trained on as a value."""

    column: str
    marker: float  # the declared missing_value
    count: int  # the values equal to it
    affected: int  # the sampled rows holding any
    rows: int  # the sampled rows
    sample: str  # what was sampled (the sample's description)

    def message(self) -> str:
        return (
            f"The column {self.column!r} holds the missing-value marker {self.marker:g} {self.count} times, in "
            f"{self.affected} of {self.rows} sampled rows ({self.sample}): the network trains on it as if it were "
            "a value."
        )

    def fix(self) -> str:
        return f"Remove the rows holding {self.marker:g}, or replace it with a sensible default, before training."


@register(
    "GA011",
    "missing-values",
    severity="error",
    also=("warning",),
    needs=(DataSample,),
    once="one finding per data column and kind of bad value: each column is read and filled on its own",
    causes=(
        NonFiniteValues,
        MissingValueMarkers,
    ),
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
            cause = NonFiniteValues(
                column, sum(bad_nan), sum(bad_inf), affected, len(rows), sample.describe()
            )
            yield ctx.finding("error", subject, cause, nodes)
        elif sum(marked):
            affected = sum(1 for m in marked if m)
            cause = MissingValueMarkers(
                column, float(marker), sum(marked), affected, len(rows), sample.describe()
            )
            yield ctx.finding("warning", subject, cause, nodes)
