"""GA013 outlier-values."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors
from graphaudit.checks._shared.data_stats import robust_z
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample
from graphaudit.findings import Cause, Finding
from graphaudit.graph.pipeline import column_subject
from graphaudit.text import counted, listing

#: Modified z-score beyond which a value is reported (Iglewicz & Hoaglin call 3.5 a *potential* outlier).
Z_LIMIT = 10.0
#: Values (and distinct values) a series needs before its outliers are judged.
MIN_VALUES = 20


def _series(rows: list[np.ndarray]) -> list[tuple[int | None, bool, np.ndarray]]:
    """``(feature, row means, one value per row)``: each feature of tabular rows, the mean of larger rows."""
    if not rows or any(r.shape != rows[0].shape for r in rows):
        return []
    stacked = np.stack(rows).astype(np.float64)
    if stacked.ndim == 1:
        return [(None, False, stacked)]
    if stacked.ndim == 2 and stacked.shape[1] <= 256:
        return [(i, False, stacked[:, i]) for i in range(stacked.shape[1])]
    flat = stacked.reshape(len(stacked), -1)
    return [(None, True, flat.mean(axis=1))]


@dataclass(frozen=True)
class OutlierValues(Cause):
    """Values of a column many robust deviations from its median."""

    column: str
    feature: (
        int | None
    )  # the feature of tabular rows they are in; None: the column's values (or its rows' means)
    row_means: bool  # the series judged is the mean of each (large) row
    count: int  # the outlying values
    value: float  # the most extreme of them...
    row: int  # ...its sampled row...
    deviations: float  # ...and how many robust deviations it lies from the median
    median: float
    rows: tuple[int, ...]  # the sampled rows of every outlying value
    sample: str  # what was sampled (the sample's description)

    def message(self) -> str:
        what = "the mean of each row" if self.row_means else "its values"
        if self.feature is not None:
            what = f"feature {self.feature}"
        return (
            f"The column {self.column!r} has {counted(self.count, 'outlying value')} in {what}: the most extreme, "
            f"{self.value:.6g} (sampled row {self.row}), lies {self.deviations:.0f} robust deviations from the "
            f"median {self.median:.6g}; rows {listing(self.rows)} ({self.sample})."
        )

    def fix(self) -> str:
        return (
            "Remove the outlying rows or give them sensible values (a sentinel such as -999 is a missing value: "
            "declare it with missing_value=...)."
        )


@register(
    "GA013",
    "outlier-values",
    severity="warning",
    needs=(DataSample,),
    once="one finding per data column: its first feature with outliers is shown, the rows listed",
    causes=(OutlierValues,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Values many robust deviations away from the rest of their column (median absolute deviation).

    What it does:
        For every feature column of the sampled training rows, takes one series per
        feature (tabular rows of up to 256 values) or the mean of each row (images, signals),
        computes the modified z-score ``0.6745 (x - median) / MAD`` of Iglewicz and Hoaglin,
        and reports a warning naming the rows whose score exceeds 10. A series needs 20 rows
        and 20 distinct values (binary and categorical features are left alone); non-finite
        values are GA011's.

    Why is this bad:
        MindSpore's accuracy guide (§1.1, "outliers in the dataset"): outliers make the model
        learn wrong relations; remove them or give them sensible values. A sentinel such as
        -999, a value in other units, or a corrupt image dominates the gradient of the batch
        it is in. Iglewicz and Hoaglin (1993, "How to Detect and Handle Outliers") mark
        scores above 3.5 as potential outliers; graphaudit reports only beyond 10, so that
        the long tails of correct data are not reported.

    Example:
        ```python
        ages = np.array([23, 31, 45, ..., -999])  # -999 marks an unknown age
        ```

    Use instead:
        ```python
        train = ds.NumpySlicesDataset({"age": ages[ages >= 0], ...})  # or declare missing_value=-999 (GA011)
        ```
    """
    sampled = ctx.need(DataSample)
    sample = sampled.sample
    for column in sampled.features:
        rows = [r for r in sample.rows_of(column) if r.dtype.kind in "iuf"]
        for feature, row_means, values in _series(rows):
            finite = np.isfinite(values)
            kept = values[finite]
            if len(kept) < MIN_VALUES or len(np.unique(kept)) < MIN_VALUES:
                continue
            z = robust_z(kept)
            if z is None:
                continue
            far = np.flatnonzero(np.abs(z) > Z_LIMIT)
            if not len(far):
                continue
            worst = far[np.argmax(np.abs(z[far]))]
            rows_at = np.flatnonzero(finite)[far]
            cause = OutlierValues(
                column,
                feature,
                row_means,
                len(far),
                float(kept[worst]),
                int(np.flatnonzero(finite)[worst]),
                float(abs(z[worst])),
                float(np.median(kept)),
                tuple(int(r) for r in rows_at),
                sample.describe(),
            )
            yield ctx.finding("warning", column_subject("train", column), cause, anchors(ctx, column=column))
            break
