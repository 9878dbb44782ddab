"""GA003 inputs-not-normalized."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors, feature_stats
from graphaudit.checks._shared.data_stats import ScaleProblem, scale_problems
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample
from graphaudit.findings import Cause, Finding
from graphaudit.graph.pipeline import column_subject
from graphaudit.text import clauses

#: Integer columns other than these hold indices (token ids, categories), not values to scale.
MEASURED_INTEGERS = ("uint8", "bool")


@dataclass(frozen=True)
class ColumnNotNormalized(Cause):
    """A feature column whose values reach the network far from zero mean and unit scale."""

    column: str
    problems: tuple[ScaleProblem, ...]  # what is far from zero mean and unit scale
    sample: str  # what was measured (DataSample's description)
    stats: str  # the column's statistics, in words

    def message(self) -> str:
        return (
            f"The column {self.column!r} reaches the network unnormalised: "
            f"{clauses(p.message() for p in self.problems)}. Measured on {self.sample}: {self.stats}."
        )

    def fix(self) -> str:
        return (
            f"Scale {self.column!r} in the pipeline: vision.Rescale(1 / 255, 0) and vision.Normalize(mean, std) with "
            "the training set's per-channel mean and std for images; for features, subtract each feature's mean and "
            "divide by its std (measured on the training set)."
        )


@register(
    "GA003",
    "inputs-not-normalized",
    severity="warning",
    needs=(DataSample,),
    once="one finding per data column: each column is prepared by its own map() operations",
    causes=(ColumnNotNormalized,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Inputs that reach the network far from zero mean and unit scale: raw 0-255 pixels, or features 100x apart.

    What it does:
        Measures every feature column (every column but the label) of the sampled training
        batches, per channel (``C`` of ``NCHW`` / ``NHWC`` images, each feature of ``(N, F)``
        rows), and reports one warning per column that holds: raw pixel values (integers from
        0 up to at least 32 and at most 255, e.g. ``uint8`` images that were never rescaled);
        a channel whose mean lies beyond ±3 or whose standard deviation is above 10 or below
        0.01 (values squashed towards zero, e.g. divided by 255 twice); or two channels whose
        standard deviations differ 100-fold or more. The message names the column and its
        statistics. Integer columns other than ``uint8`` are token or category indices and
        are not measured.

    Why is this bad:
        MindSpore's accuracy guide (§1.2, "data not normalised or standardised"): models
        expect each input dimension between -1 and 1 with mean 0, and dimensions whose scales
        differ by orders of magnitude hurt training. Raw 0-255 inputs saturate activations
        and make the first layer's gradients hundreds of times larger than the others'. The
        thresholds are graphaudit's: ±3 and 10 leave room for standardised data with heavy
        tails, and 100x (two orders of magnitude) keeps binary features next to
        standardised ones from being reported.

    Example:
        ```python
        train = ds.ImageFolderDataset("train/").map([vision.Decode(), vision.Resize(224), vision.HWC2CHW()], "image")
        ```

    Use instead:
        ```python
        train = ds.ImageFolderDataset("train/").map(
            [vision.Decode(), vision.Resize(224), vision.Rescale(1 / 255, 0),
             vision.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]), vision.HWC2CHW()], "image")
        ```

        A network that normalises its own input (a BatchNorm or a scaling layer first) may
        take raw values on purpose; then this warning can be allowed.
    """
    sampled = ctx.need(DataSample)
    name = "train"
    for column, stats in feature_stats(ctx).items():
        if stats.dtype[0] in "iu" and stats.dtype not in MEASURED_INTEGERS:
            continue
        problems = scale_problems(stats)
        if not problems:
            continue
        subject = column_subject(name, column)
        cause = ColumnNotNormalized(column, tuple(problems), sampled.sample.describe(), stats.describe())
        yield ctx.finding("warning", subject, cause, anchors(ctx, column=column))
