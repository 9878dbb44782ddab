"""GA008 class-imbalance."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample
from graphaudit.evidence.dataset_labels import LabelCounts
from graphaudit.findings import Cause, Finding
from graphaudit.graph.pipeline import column_subject

#: The largest class holding this many times the rows of the smallest is an imbalance (the article's 1000 vs 100).
IMBALANCE_RATIO = 10.0


@dataclass(frozen=True)
class ClassImbalance(Cause):
    """The largest training class holds many times the rows of the smallest."""

    column: str
    large: int  # the largest class
    large_rows: int
    small: int  # the smallest class
    small_rows: int
    counted_on: str  # what the labels were counted on
    whole: bool  # counted on the whole column (else estimated from a sample)

    def message(self) -> str:
        estimated = (
            "" if self.whole else " (an estimate: the sample holds too few rows to count rare classes well)"
        )
        return (
            f"The training classes are out of balance: class {self.large} has {self.large_rows} rows and class "
            f"{self.small} {self.small_rows}, {self.large_rows / self.small_rows:.0f} times fewer (counted on "
            f"{self.counted_on}){estimated}."
        )

    def fix(self) -> str:
        return (
            "Collect more rows of the small classes, or rebalance the sampling (ds.WeightedRandomSampler) or the "
            "loss (class weights); if the imbalance is the one the model will meet, declare it: imbalanced=True."
        )


@register(
    "GA008",
    "class-imbalance",
    severity="warning",
    also=("info",),
    needs=(LabelCounts,),
    uses=(DataSample,),
    once="one finding per label column: its largest and smallest classes",
    causes=(ClassImbalance,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Classes out of balance: the largest class has 10 times the rows of the smallest, or more.

    What it does:
        Counts the rows of each class of the training labels and reports the ratio of the
        largest count to the smallest when it is 10 or more: a warning when counted over the
        whole label column (read from the source when that is cheap, or every row sampled),
        info when estimated from a sample (a few batches cannot measure a rare class well).
        It is silent when the imbalance is declared intended (``imbalanced=True``,
        ``--imbalanced``: the class frequencies are those the model will meet) or handled by
        the pipeline's sampler (``WeightedRandomSampler``, ``PKSampler``).

    Why is this bad:
        MindSpore's accuracy guide (§1.1, "classes out of balance"): when most classes have
        1000 samples and one has 100, the model predicts the small class poorly; the guide's
        own example, a 10x gap, is the threshold used here. Accuracy hides it: always
        predicting the large classes scores well.

    Example:
        ```python
        train = ds.ImageFolderDataset("train/")  # cat/: 100 images, dog/: 1,000 images
        ```

    Use instead:
        ```python
        weights = [1 / counts[label] for label in labels]  # rebalance the sampling...
        train = ds.ImageFolderDataset("train/", sampler=ds.WeightedRandomSampler(weights, len(weights)))
        report = graphaudit.audit(net, optimizer, dataset=train, imbalanced=True)  # ...or declare it intended
        ```

        Collecting more samples of the small classes is the guide's first advice.
    """
    counts = ctx.need(LabelCounts)
    if counts.intended_imbalance or counts.rebalanced or len(counts.counts) < 2:
        return
    (small, low), (big, high) = (
        min(counts.counts.items(), key=lambda kv: kv[1]),
        max(counts.counts.items(), key=lambda kv: kv[1]),
    )
    if high < IMBALANCE_RATIO * low:
        return
    severity = "warning" if counts.whole else "info"
    cause = ClassImbalance(
        counts.column, int(big), int(high), int(small), int(low), counts.where, counts.whole
    )
    yield ctx.finding(severity, column_subject("train", counts.column), cause, anchors(ctx, label=True))
