"""What the labels of the training data are judged against: their counts, the classes, the loss, the network.

=======================  =================================================================
:class:`LabelCounts`     the class counts of the training labels: over the whole label
                         column when that is cheap, else over the sample, saying which
                         (``imbalanced=True`` declares an imbalance intended)
:class:`ClassCount`      the number of classes the network predicts (``num_classes=``, or
                         the width of its traced output)
:class:`LossChoice`      the loss the network is trained with (``loss_fn=``)
:class:`DataConsumer`    the network the data feeds (absent from a data-only audit)
=======================  =================================================================

Example:
    >>> import numpy as np
    >>> import mindspore.dataset as ds
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> data = ds.NumpySlicesDataset({"x": np.zeros((6, 2)), "label": [0, 0, 0, 0, 1, 2]}).batch(2)
    >>> counts = EvidenceSet(AuditRequest(None, options={"dataset": data})).need(LabelCounts)
    >>> counts.counts, counts.whole
    ({0: 4, 1: 1, 2: 1}, True)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Option, Requirement
from graphaudit.evidence.dataset import DataSample, TrainingData
from graphaudit.evidence.network import NetworkGraph
from graphaudit.evidence.optimizer import OptimizerView
from graphaudit.evidence.trace import TracedPass

__all__ = ["REGRESSION_LOSSES", "ClassCount", "DataConsumer", "LabelCounts", "LossChoice"]

#: Losses that compare the output with targets of its own shape: their output width is no class count.
REGRESSION_LOSSES = frozenset({"MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "RMSELoss", "MAELoss"})


def _one_hot_width(have: EvidenceSet, column: str) -> int:
    sample = have.get(DataSample)
    values = sample.sample.column(column) if sample is not None else None
    if values is not None and values.ndim == 2 and values.shape[1] > 1:
        return int(values.shape[1])
    data = have.need(TrainingData)
    graph = data.graph
    for _, attrs in graph.nodes(data=True):
        if (
            attrs["kind"] == "transform"
            and attrs["name"] == "OneHot"
            and column in json.loads(attrs["columns"])
        ):
            return int(json.loads(attrs["params"]).get("num_classes", 0))
    return 0


@dataclass(frozen=True)
class LabelCounts(Evidence):
    """How many training rows carry each class index; ``where`` says what was counted."""

    title = "the class counts of the training labels"
    requirement = Requirement(
        "pass dataset=train_ds with a label column (label_column='...' when it is not called label)",
        "give --dataset MODULE:FACTORY (and --label-column NAME when it is not called label)",
    )
    needs = (TrainingData,)
    uses = (DataSample,)  # the sampled rows, when they could be read
    options = (
        Option(
            "imbalanced",
            "the training set is imbalanced on purpose (its class frequencies are the deployment's): GA008 is silent",
            flag="--imbalanced",
            cli_value="flag",
            default=False,
        ),
    )

    counts: dict[int, int]
    where: str
    whole: bool
    column: str
    one_hot_width: int = 0
    intended_imbalance: bool = False
    rebalanced: str = ""

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> LabelCounts | Missing:
        from graphaudit.capture.data.labels import label_counts, whole_label_column

        data = have.need(TrainingData)
        column = data.label_column
        if column is None:
            return Missing(
                f"the training pipeline has no column named like a label (its columns are {list(data.features)}): "
                "pass label_column='...'"
            )
        intended = bool(request.option("imbalanced"))
        sampler = next((d["sampler"] for _, d in data.graph.nodes(data=True) if d.get("sampler")), "")
        rebalanced = sampler if sampler in ("WeightedRandomSampler", "PKSampler") else ""
        extra = {"intended_imbalance": intended, "rebalanced": rebalanced}
        whole = whole_label_column(data.pipeline, column)
        if whole is not None:
            return cls(whole.counts, whole.where, True, column, _one_hot_width(have, column), **extra)
        sampled = have.get(DataSample)
        if sampled is None:
            reason = getattr(have.missing(DataSample), "reason", None)
            return Missing(
                "the labels cannot be counted without running the pipeline, and "
                + (reason or "no batch was sampled")
            )
        values = sampled.sample.column(column)
        counts = label_counts(values) if values is not None else None
        if counts is None:
            return Missing(f"the column {column!r} holds no class labels (integers or one-hot rows)")
        sample = sampled.sample
        where = f"the sample ({sample.describe()})"
        if sample.complete:
            where = f"the whole label column (every row of one epoch was sampled: {sample.rows} rows)"
        return cls(counts, where, sample.complete, column, _one_hot_width(have, column), **extra)


@dataclass(frozen=True)
class ClassCount(Evidence):
    """The number of classes the network predicts, and where that number comes from."""

    title = "the number of classes the network can produce"
    requirement = Requirement(
        "pass num_classes=N, or inputs=(x,) so that the width of the network's output is traced",
        "give --num-classes N, or --input SHAPE",
    )
    uses = (TracedPass,)  # the width of the traced output, when num_classes= is not given
    options = (
        Option(
            "num_classes",
            "the number of classes the network predicts (default: the width of its traced output)",
            flag="--num-classes",
            metavar="N",
            type=int,
            minimum=1,
        ),
    )

    classes: int
    where: str
    node: str | None = None

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> ClassCount | Missing:
        if request.option("num_classes") is not None:
            classes = request.option("num_classes")
            return cls(classes, f"num_classes={classes}")
        traced = have.get(TracedPass)
        if traced is None or type(request.loss_fn).__name__ in REGRESSION_LOSSES:
            return Missing()
        output = traced.output[0] if isinstance(traced.output, (tuple, list)) else traced.output
        shape = tuple(getattr(output, "shape", ()))
        if len(shape) != 2 or shape[1] < 2:
            return Missing(
                f"the network's traced output has shape {list(shape)}, not (batch, classes): pass num_classes=N"
            )
        return cls(int(shape[1]), f"the width of the network's traced output {list(shape)}", "output:0")


@dataclass(frozen=True)
class LossChoice(Evidence):
    """The loss cell given to the audit (as ``loss_fn=`` or inside a training wrapper)."""

    title = "the loss the network is trained with"
    requirement = Requirement(
        "pass loss_fn=... (or a WithLossCell, TrainOneStepCell or Model holding the loss)",
        "give a loss (a factory returning (net, optimizer, loss_fn), or a WithLossCell)",
    )

    loss_fn: Any

    @property
    def name(self) -> str:
        return type(self.loss_fn).__name__

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> LossChoice | Missing:
        return Missing() if request.loss_fn is None else cls(request.loss_fn)


@dataclass(frozen=True)
class DataConsumer(Evidence):
    """The network the data feeds: how many parameters it trains, and how they were counted."""

    title = "the network the data feeds"
    requirement = Requirement(
        "audit the data with the network it trains: graphaudit.audit(net, optimizer, dataset=train_ds)",
        "give the network's MODULE:FACTORY together with --dataset",
    )
    needs = (NetworkGraph,)
    uses = (OptimizerView,)

    trainable: int
    counted: str

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> DataConsumer | Missing:
        structure = have.need(NetworkGraph).structure
        if not structure.cells:
            return Missing()  # a data-only audit (graphaudit.audit_dataset)
        view = have.get(OptimizerView)
        params = list(structure.parameters.values())
        if view is not None:
            chosen, counted = [p for p in params if view.holds(p)], "updated by the optimizer"
        else:
            chosen, counted = [p for p in params if p.requires_grad], "with requires_grad=True"
        return cls(sum(int(p.size) for p in chosen), counted)
