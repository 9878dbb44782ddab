"""``audit_dataset(train_ds, eval_dataset)``: the data checks (GA0xx) on pipelines alone, without a network.

It runs the checks that read a pipeline (those whose evidence is made from ``dataset=`` or
``eval_dataset=``). A data-only audit has no network: its :class:`~graphaudit.report.Report` holds an empty
network graph (named ``(no network)``), the pipeline graphs in ``Report.datasets``
(``"train"``, ``"eval"``), and the family-0 checks' findings. The checks that judge the
data against the network (labels against its output width, the training set against its
parameter count, a last batch of one against its BatchNorms) are listed as not run, saying
to audit the data with its network: ``graphaudit.audit(net, optimizer, dataset=train_ds)``,
which runs every check, these included, through the same evidence.

Example:
    >>> import numpy as np
    >>> import mindspore.dataset as ds
    >>> import graphaudit
    >>> x = np.random.default_rng(0).random((64, 4)).astype(np.float32)
    >>> train = ds.NumpySlicesDataset({"x": x, "label": np.arange(64) % 2}, shuffle=False).batch(8)
    >>> report = graphaudit.audit_dataset(train)
    >>> [f.check_id for f in report.findings if f.severity != "info"], sorted(report.datasets)
    (['GA001'], ['train'])
"""

from __future__ import annotations

import dataclasses
from typing import Any

import networkx as nx

from graphaudit.checks import all_checks
from graphaudit.errors.arguments import checked_call
from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet
from graphaudit.evidence.dataset import (
    DEFAULT_BATCHES,
    DEFAULT_MAX_ROWS,
    DEFAULT_SECONDS,
    EvaluationData,
    TrainingData,
    pipeline_graphs,
)
from graphaudit.evidence.network import NetworkGraph
from graphaudit.report import Report
from graphaudit.runner import configuration, judged, judging
from graphaudit.runner.request import check_options

__all__ = ["audit_dataset"]

NO_NETWORK = "(no network)"


def _reads_data(kinds: tuple[type[Evidence], ...]) -> bool:
    """Whether evidence of *kinds* is made from a pipeline (the checks a data-only audit runs)."""
    return any(kind in (TrainingData, EvaluationData) or _reads_data(kind.needs) for kind in kinds)


def no_network() -> NetworkGraph:
    """The empty network of an audit that has none (a pipeline's, fingerprints')."""
    from graphaudit.capture.network.structure import Structure

    return NetworkGraph(nx.MultiDiGraph(name=NO_NETWORK, traced=False), Structure())


@checked_call
def audit_dataset(
    train_ds: Any,
    eval_dataset: Any = None,
    *,
    num_classes: int | None = None,
    batches: int = DEFAULT_BATCHES,
    label_column: str | None = None,
    imbalanced: bool = False,
    missing_value: float | None = None,
    seconds: float = DEFAULT_SECONDS,
    max_rows: int = DEFAULT_MAX_ROWS,
    select: Any = None,
    ignore: Any = None,
    config: Any = None,
) -> Report:
    """Run the data-pipeline checks on *train_ds* (and *eval_dataset*) and return a :class:`~graphaudit.report.Report`.

    *train_ds* is the ``mindspore.dataset`` pipeline the network trains on, *eval_dataset*
    the one it is evaluated on. The structure of both is read without iterating them; up to
    *batches* batches of *train_ds* (and one of *eval_dataset*) are sampled from a fresh
    iterator on a copy, leaving the user's iterators and epochs as they were (``batches=0``:
    structure only, the checks that measure values are then not run). *num_classes* is the
    number of classes the network predicts (labels outside ``[0, num_classes)`` are
    reported); *label_column* the column holding the labels when it is not called ``label``
    (or ``labels``, ``target``, ``y``...); ``imbalanced=True`` declares the class imbalance
    intended; *missing_value* a marker of missing entries (e.g. ``-999``). The same
    keywords work for ``graphaudit.audit(net, optimizer, dataset=train_ds, ...)``, with
    ``dataset_batches=`` for *batches*. Sampling stops after *seconds*, or once the
    pipeline's filters have read *max_rows* rows (``dataset_seconds=``,
    ``dataset_max_rows=``), with what was sampled by then. What is reported follows the
    configuration as for :func:`graphaudit.audit` (``[tool.graphaudit]``, *config*, *select*, *ignore*).
    """
    if train_ds is None:
        from graphaudit.capture.data.pipeline import check_dataset

        check_dataset(train_ds, "train_ds")  # None would skip the data checks
    options: dict[str, Any] = {
        "dataset": train_ds,
        "dataset_batches": batches,
        "dataset_seconds": seconds,
        "dataset_max_rows": max_rows,
    }
    given = {
        "eval_dataset": eval_dataset,
        "num_classes": num_classes,
        "label_column": label_column,
        "missing_value": missing_value,
        "imbalanced": None if imbalanced is False else imbalanced,
    }
    options |= {k: v for k, v in given.items() if v is not None}
    settings = configuration(config, "audit_dataset()").with_keywords(select=select, ignore=ignore)
    left = "The pipelines were left as they were; if the error is not in your pipeline's own code"
    with judging("the data audit", left):
        request = AuditRequest(None, train_ds, options=check_options(options))
        have = EvidenceSet(request, {NetworkGraph: no_network()})
        have.need(TrainingData)  # a wrong train_ds is the user's error, raised before any check runs
        report = judged(
            have, settings, [check for check in all_checks().values() if _reads_data(check.needs)]
        )
        return dataclasses.replace(report, network=type(train_ds).__name__, datasets=pipeline_graphs(have))
