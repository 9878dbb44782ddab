"""The data pipelines the network trains and is evaluated on, and the batches sampled from them.

``audit(net, optimizer, dataset=train_ds, eval_dataset=eval_ds, ...)`` (or
:func:`graphaudit.audit_dataset`, ``graphaudit audit ... --dataset MODULE:FACTORY``):

=======================  =================================================================
:class:`TrainingData`    the training pipeline, captured as a graph (``dataset=``)
:class:`EvaluationData`  the evaluation pipeline, captured as a graph (``eval_dataset=``)
:class:`DataSample`      a few batches of the training pipeline (``dataset_batches=``, 8)
:class:`EvalSample`      one batch of the evaluation pipeline
=======================  =================================================================

The pipelines are read without iterating them (:mod:`graphaudit.capture.data.pipeline`); the
samples come from a fresh iterator on a copy (:mod:`graphaudit.capture.data.sampling`),
so the user's iterators and epochs are untouched. ``dataset_batches=0`` turns sampling off:
the checks that measure values are then listed as not run.

Example:
    >>> import numpy as np
    >>> import mindspore.dataset as ds
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> data = ds.NumpySlicesDataset({"image": np.zeros((8, 3)), "label": np.arange(8) % 2}).batch(4)
    >>> have = EvidenceSet(AuditRequest(None, options={"dataset": data, "dataset_batches": 1}))
    >>> have.need(TrainingData).label_column, have.need(DataSample).sample.rows
    ('label', 4)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphaudit.errors import ArgumentError
from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Option, Requirement

if TYPE_CHECKING:
    import networkx as nx

    from graphaudit.capture.data.pipeline import Pipeline
    from graphaudit.capture.data.sampling import Sample

__all__ = [
    "DEFAULT_BATCHES",
    "DEFAULT_MAX_ROWS",
    "DEFAULT_SECONDS",
    "LABEL_NAMES",
    "DataSample",
    "EvalSample",
    "EvaluationData",
    "TrainingData",
    "pipeline_graphs",
]

DEFAULT_BATCHES = 8
#: Sampling stops after this many seconds (``dataset_seconds=``)...
DEFAULT_SECONDS = 60.0
#: ...or once the pipeline's filters have read this many rows (``dataset_max_rows=``).
DEFAULT_MAX_ROWS = 1_000_000
#: Column names taken for the label when ``label_column=`` is not given (any case).
LABEL_NAMES = ("label", "labels", "target", "targets", "y", "class", "class_id", "category")


def _pipeline(name: str, value: Any) -> Any:
    """*value* when it is a ``mindspore.dataset`` pipeline (the check of ``dataset=``, ``eval_dataset=``)."""
    from graphaudit.capture.data.pipeline import check_dataset

    return check_dataset(value, name)


@dataclass(frozen=True)
class _Data:
    """A captured pipeline, its label column and the columns that feed the network (not a kind itself)."""

    pipeline: Pipeline
    label_column: str | None
    features: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.pipeline.name

    @property
    def graph(self) -> nx.MultiDiGraph:
        return self.pipeline.graph

    @classmethod
    def _capture(cls, request: AuditRequest, option: str, name: str) -> Any:
        from graphaudit.capture.data.pipeline import capture_pipeline, check_dataset
        from graphaudit.graph.pipeline import columns_of

        given = request.option(option)
        if given is None:
            return Missing()
        pipeline = capture_pipeline(check_dataset(given, option), name)
        columns = columns_of(pipeline.graph.nodes[pipeline.sink]) or []
        wanted = request.option("label_column")
        if wanted is not None and wanted not in columns and columns:
            raise ArgumentError(
                f"label_column={wanted!r} is not a column of the {option} pipeline; its columns are {columns}."
            )
        label = wanted or next((c for c in columns if c.lower() in LABEL_NAMES), None)
        return cls(pipeline, label if label in columns else None, tuple(c for c in columns if c != label))


@dataclass(frozen=True)
class TrainingData(_Data, Evidence):
    """The training pipeline (``dataset=``), captured as a graph without iterating it."""

    title = "the training data pipeline"
    requirement = Requirement(
        "pass dataset=train_ds (the mindspore.dataset pipeline the network trains on)",
        "give --dataset MODULE:FACTORY (a function returning the training pipeline)",
    )
    options = (
        Option(
            "dataset",
            "the mindspore.dataset pipeline the network trains on (GA0xx checks)",
            flag="--dataset",
            metavar="MODULE:FACTORY",
            cli_value="reference",
            parse=_pipeline,
        ),
        Option(
            "label_column",
            "the column of the pipelines that holds the labels (default: label, labels, target, y...)",
            flag="--label-column",
            metavar="NAME",
            type=str,
        ),
    )

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> TrainingData | Missing:
        return cls._capture(request, "dataset", "train")


@dataclass(frozen=True)
class EvaluationData(_Data, Evidence):
    """The evaluation pipeline (``eval_dataset=``), captured as a graph without iterating it."""

    title = "the evaluation data pipeline"
    requirement = Requirement(
        "pass eval_dataset=eval_ds (the pipeline the network is evaluated or served with)",
        "give --eval-dataset MODULE:FACTORY",
    )
    options = (
        Option(
            "eval_dataset",
            "the mindspore.dataset pipeline the network is evaluated on, compared with dataset= (GA004, GA005)",
            flag="--eval-dataset",
            metavar="MODULE:FACTORY",
            cli_value="reference",
            parse=_pipeline,
        ),
    )

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> EvaluationData | Missing:
        return cls._capture(request, "eval_dataset", "eval")


def _sample(request: AuditRequest, data: _Data, batches: int, label: str) -> Sample | Missing:
    from graphaudit.capture.data.sampling import SamplingError, sample_pipeline

    seconds = request.option("dataset_seconds")  # parsed at the door (Option)
    max_rows = request.option("dataset_max_rows")
    try:
        return sample_pipeline(data.pipeline, batches, label=label, seconds=seconds, max_rows=max_rows)
    except SamplingError as err:
        return Missing(str(err))


@dataclass(frozen=True)
class DataSample(Evidence):
    """A few batches of the training pipeline, from a fresh iterator on a copy of it."""

    title = "batches sampled from the training data"
    requirement = Requirement(
        "pass dataset=train_ds (with dataset_batches=N > 0 batches to sample; 8 by default)",
        "give --dataset MODULE:FACTORY (with --dataset-batches N > 0)",
    )
    needs = (TrainingData,)
    options = (
        Option(
            "dataset_batches",
            f"how many batches of dataset= to sample for the checks that measure values ({DEFAULT_BATCHES}; 0: none)",
            flag="--dataset-batches",
            metavar="N",
            type=int,
            minimum=0,
            default=DEFAULT_BATCHES,
        ),
        Option(
            "dataset_seconds",
            f"how long sampling may take, in seconds ({DEFAULT_SECONDS:g}); what was sampled by then is used",
            flag="--dataset-seconds",
            metavar="SECONDS",
            type=float,
            above=0,
            default=DEFAULT_SECONDS,
        ),
        Option(
            "dataset_max_rows",
            f"how many rows the pipeline's filters may read while sampling ({DEFAULT_MAX_ROWS}): an endless "
            "source behind a filter that passes nothing stops there",
            flag="--dataset-max-rows",
            metavar="N",
            type=int,
            minimum=1,
            default=DEFAULT_MAX_ROWS,
        ),
        Option(
            "missing_value",
            "a value that marks a missing entry in the data (e.g. -1 or -999), reported like NaN (GA011)",
            flag="--missing-value",
            metavar="VALUE",
            type=float,
        ),
    )

    sample: Sample
    label_column: str | None
    features: tuple[str, ...]
    missing_value: float | None = None

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> DataSample | Missing:
        batches = request.option("dataset_batches")  # options are parsed at the door
        missing = request.option("missing_value")
        if batches == 0:
            return Missing("sampling is turned off (dataset_batches=0)")
        data = have.need(TrainingData)
        sample = _sample(request, data, batches, "the training data")
        if isinstance(sample, Missing):
            return sample
        return cls(sample, data.label_column, data.features, missing)


@dataclass(frozen=True)
class EvalSample(Evidence):
    """One batch of the evaluation pipeline (its shapes and dtypes, compared with training's)."""

    title = "a batch sampled from the evaluation data"
    requirement = Requirement(
        "pass eval_dataset=eval_ds (with dataset_batches > 0)",
        "give --eval-dataset MODULE:FACTORY (with --dataset-batches N > 0)",
    )
    needs = (EvaluationData,)

    sample: Sample
    label_column: str | None
    features: tuple[str, ...]

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> EvalSample | Missing:
        if request.option("dataset_batches") == 0:
            return Missing("sampling is turned off (dataset_batches=0)")
        data = have.need(EvaluationData)
        sample = _sample(request, data, 1, "the evaluation data")
        if isinstance(sample, Missing):
            return sample
        return cls(sample, data.label_column, data.features)


def pipeline_graphs(have: EvidenceSet) -> dict[str, nx.MultiDiGraph]:
    """The pipeline graphs of an audit by name (``train``, ``eval``): what ``Report.datasets`` holds."""
    found = {}
    for kind in (TrainingData, EvaluationData):
        data = have.get(kind)
        if data is not None:
            found[data.name] = data.graph
    return found
