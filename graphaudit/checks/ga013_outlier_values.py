"""GA013 outlier-values."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors
from graphaudit.checks._shared.data_stats import robust_z
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample
from graphaudit.findings import Finding
from graphaudit.graph.pipeline import column_subject

#: Modified z-score beyond which a value is reported (Iglewicz & Hoaglin call 3.5 a *potential* outlier).
Z_LIMIT = 10.0
#: Values (and distinct values) a series needs before its outliers are judged.
MIN_VALUES = 20


def _series(rows: list[np.ndarray]) -> list[tuple[str, np.ndarray]]:
    """``(what, one value per row)``: each feature of tabular rows, the mean of larger rows."""
    if not rows or any(r.shape != rows[0].shape for r in rows):
        return []
    stacked = np.stack(rows).astype(np.float64)
    if stacked.ndim == 1:
        return [("its values", stacked)]
    if stacked.ndim == 2 and stacked.shape[1] <= 256:
        return [(f"feature {i}", stacked[:, i]) for i in range(stacked.shape[1])]
    flat = stacked.reshape(len(stacked), -1)
    return [("the mean of each row", flat.mean(axis=1))]


@register(
    "GA013",
    "outlier-values",
    severity="warning",
    needs=(DataSample,),
    once="one finding per data column: its first feature with outliers is shown, the rows listed",
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
        for what, values in _series(rows):
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
            yield ctx.finding(
                "warning",
                column_subject("train", column),
                f"The column {column!r} has {len(far)} outlying value(s) in {what}: the most extreme, {kept[worst]:.6g} "
                f"(sampled row {int(np.flatnonzero(finite)[worst])}), lies {abs(z[worst]):.0f} robust deviations "
                f"from the median {np.median(kept):.6g}; rows {rows_at[:8].tolist()} ({sample.describe()}).",
                "Remove the outlying rows or give them sensible values (a sentinel such as -999 is a missing value: "
                "declare it with missing_value=...).",
                anchors(ctx, column=column),
            )
            break
