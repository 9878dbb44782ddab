"""GA009 few-samples-per-class."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors
from graphaudit.checks._shared.data_pipeline import dataset_rows
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample, TrainingData
from graphaudit.evidence.dataset_labels import LabelCounts
from graphaudit.findings import Cause, Finding
from graphaudit.graph.pipeline import column_subject

#: Labelled rows per class at which supervised deep learning typically performs acceptably (the article).
SUFFICIENT_PER_CLASS = 5000


@dataclass(frozen=True)
class FewSamplesPerClass(Cause):
    """Classes with fewer labelled training rows than supervised learning typically needs."""

    column: str
    few: int  # the classes short of rows
    classes: int  # the classes counted
    sufficient: int  # the rows per class that suffice
    smallest: int  # the class with the fewest rows...
    smallest_rows: int  # ...and its rows
    counted_on: str  # what the labels were counted on
    epoch_rows: int | None = None  # the rows of an epoch the sample's counts were scaled to (an estimate)

    def message(self) -> str:
        where = self.counted_on
        if self.epoch_rows is not None:
            where = f"{where}, scaled to the {self.epoch_rows} rows of an epoch: an estimate"
        return (
            f"{self.few} of {self.classes} classes have fewer than {self.sufficient:,} labelled training rows "
            f"(the fewest: class {self.smallest} with {self.smallest_rows}; counted on {where})."
        )

    def fix(self) -> str:
        return "Collect more labelled rows, augment the training data, or start from a pretrained model."


@register(
    "GA009",
    "few-samples-per-class",
    severity="info",
    needs=(
        LabelCounts,
        TrainingData,
    ),
    uses=(DataSample,),
    once="one finding per label column: every class short of samples is listed in it",
    causes=(FewSamplesPerClass,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Classes with fewer than 5,000 labelled training rows, the level the accuracy guide calls typically sufficient.

    What it does:
        Counts the training rows of each class (over the whole label column when cheap; from
        a sample, scaled to the pipeline's row count when MindSpore knows it, and said to be
        an estimate) and reports, as info, the classes below 5,000 rows.

    Why is this bad:
        MindSpore's accuracy guide (§1.1, "classes out of balance" and "too few training
        samples"): as a reference, supervised deep learning reaches acceptable performance
        with about 5,000 labelled samples per class (and surpasses humans above 10 million
        labelled samples). Fewer is not a bug (fine-tuning a pretrained model needs far
        less, and many good datasets are smaller), hence info: a fact to weigh when accuracy
        falls short.

    Example:
        ```python
        train = ds.ImageFolderDataset("flowers/")  # 80 images per class
        ```

    Use instead:
        ```python
        net = load_pretrained_backbone()  # fine-tune, augment, or collect more data per class
        ```
    """
    counts = ctx.need(LabelCounts)
    per_class = dict(counts.counts)
    epoch_rows = None
    if not counts.whole:
        rows = dataset_rows(ctx.need(TrainingData).graph)
        if rows <= 0 or not counts.total:
            return
        per_class = {label: round(n * rows / counts.total) for label, n in per_class.items()}
        epoch_rows = int(rows)
    few = {label: n for label, n in per_class.items() if n < SUFFICIENT_PER_CLASS}
    if not few:
        return
    smallest = min(few, key=few.get)  # type: ignore[arg-type]
    cause = FewSamplesPerClass(
        counts.column,
        len(few),
        len(per_class),
        SUFFICIENT_PER_CLASS,
        int(smallest),
        int(few[smallest]),
        counts.where,
        epoch_rows,
    )
    yield ctx.finding("info", column_subject("train", counts.column), cause, anchors(ctx, label=True))
