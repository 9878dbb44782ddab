"""GA010 training-set-small-for-model."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors
from graphaudit.checks._shared.data_pipeline import dataset_rows
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample, TrainingData
from graphaudit.evidence.dataset_labels import DataConsumer, LabelCounts
from graphaudit.findings import Cause, Finding

#: Trainable parameters per training row above which the set is reported as small (info)...
INFO_RATIO = 1_000
#: ...and above which even fine-tuning a pretrained model is unusual (warning).
WARNING_RATIO = 100_000


@dataclass(frozen=True)
class TrainingSetSmallForModel(Cause):
    """Many trainable parameters per training row: the network can memorise the set."""

    trainable: int  # the network's trainable parameters
    counted: str  # how they were counted (DataConsumer's words)
    rows: int  # the training rows
    counted_on: str  # what the rows were counted on

    def message(self) -> str:
        return (
            f"The network has {self.trainable:,} trainable parameters ({self.counted}) for {self.rows:,} training "
            f"rows ({self.counted_on}): {self.trainable / self.rows:,.0f} parameters per row. It can memorise the "
            "training set instead of learning."
        )

    def fix(self) -> str:
        return "Collect more training data, use a smaller model, or fine-tune a pretrained one with most layers frozen."


@register(
    "GA010",
    "training-set-small-for-model",
    severity="warning",
    also=("info",),
    needs=(
        TrainingData,
        DataConsumer,
    ),
    uses=(
        DataSample,
        LabelCounts,
    ),
    once="one finding per training set: its rows against the network's trainable parameters",
    causes=(TrainingSetSmallForModel,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A training set tiny for the model: over 1,000 trainable parameters per training row (info), over 100,000 (warning).

    What it does:
        Divides the network's trainable parameters (those the optimizer updates, or with
        ``requires_grad=True`` without one) by the rows of one training epoch (the whole
        label column's count when known, else MindSpore's row count of the pipeline's
        sources, over every shard) and reports info above 1,000 parameters per row and a
        warning above 100,000. A pipeline of unknown length is not judged.

    Why is this bad:
        MindSpore's accuracy guide (§1.1, "too few training samples"): a training set small
        for the model's capacity makes training unstable and overfitting likely; when the
        parameter count is out of proportion to the number of samples, add samples or reduce
        the model. The ratios are graphaudit's, set from common practice: ResNet-50 on
        ImageNet trains about 20 parameters per image from scratch, while fine-tuning a
        pretrained model routinely reaches thousands (BERT-base on a 3,700-pair task:
        about 30,000), hence only info there; beyond 100,000 per row even fine-tuning is
        unusual.

    Example:
        ```python
        net = nn.SequentialCell([nn.Dense(3072, 4096), nn.ReLU(), nn.Dense(4096, 10)])  # 12.6M parameters
        train = ds.NumpySlicesDataset({"x": x[:64], "label": y[:64]})                  # 64 rows
        ```

    Use instead:
        ```python
        net = nn.SequentialCell([nn.Dense(3072, 64), nn.ReLU(), nn.Dense(64, 10)])  # or far more data
        ```
    """
    network = ctx.need(DataConsumer)
    counts = ctx.get(LabelCounts)
    if counts is not None and counts.whole:
        rows, where = counts.total, counts.where
    else:
        rows, where = (
            dataset_rows(ctx.need(TrainingData).graph),
            "MindSpore's row count of the pipeline's sources",
        )
    if rows <= 0 or not network.trainable:
        return
    ratio = network.trainable / rows
    if ratio <= INFO_RATIO:
        return
    severity = "warning" if ratio > WARNING_RATIO else "info"
    cause = TrainingSetSmallForModel(int(network.trainable), network.counted, int(rows), where)
    yield ctx.finding(severity, "train", cause, anchors(ctx))
