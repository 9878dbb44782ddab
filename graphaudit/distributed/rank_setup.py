"""How this rank trains, beside its weights: the parallel context, the gradient reducer, the data.

What :class:`~graphaudit.distributed.fingerprint.RankSetup` holds, read from MindSpore: the
auto-parallel context (:func:`parallel_context`), the ``DistributedGradReducer`` of a train
cell (:func:`reducer_of`) and the facts of the training pipeline (:func:`data_facts`). The
audit takes it once per rank and the ranks exchange it inside their fingerprints (the same
``AllGather`` GA801 uses), or it travels in the fingerprint files given as ``peers=``.

Example:
    >>> import numpy as np
    >>> import mindspore.dataset as ds
    >>> from graphaudit.capture.data.pipeline import capture_pipeline
    >>> data = ds.NumpySlicesDataset({"x": np.arange(8.0)}, shuffle=False, num_shards=2, shard_id=1).batch(2)
    >>> facts = data_facts(capture_pipeline(data))
    >>> facts.sources[0].num_shards, facts.sources[0].shard_id, facts.batch_size, facts.batches
    (2, 1, 2, 2)
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

import numpy as np

from graphaudit.distributed.fingerprint import DataFacts, RankSetup, SourceShard

if TYPE_CHECKING:
    from graphaudit.capture.data.pipeline import Pipeline
    from graphaudit.capture.data.sampling import Sample

__all__ = ["data_facts", "parallel_context", "rank_setup", "reducer_of", "setup_of"]

#: Node attributes of a pipeline step that say where its rows come from, not what is done to them.
_WHERE = {"rows", "columns", "location", "order", "num_shards", "shard_id", "num_samples", "path", "pipeline"}


def parallel_context() -> tuple[str, bool | None]:
    """MindSpore's ``parallel_mode`` and ``gradients_mean`` (``None`` when it cannot say)."""
    import mindspore as ms

    try:
        mode = str(ms.get_auto_parallel_context("parallel_mode"))
    except Exception:  # an unreadable context: stand-alone as far as anyone can tell
        return "stand_alone", None
    try:
        mean = bool(ms.get_auto_parallel_context("gradients_mean"))
    except Exception:
        mean = None
    return mode, mean


def reducer_of(net: Any) -> str | None:
    """``"mean"`` or ``"sum"`` for a cell holding a ``DistributedGradReducer`` (``TrainOneStepCell``), else ``None``."""
    from mindspore import nn

    reducer = getattr(net, "grad_reducer", None)
    if isinstance(reducer, nn.DistributedGradReducer):
        return "mean" if reducer.mean else "sum"
    return None


def _digest(*parts: Any) -> str:
    hasher = hashlib.blake2b(digest_size=16)
    for part in parts:
        hasher.update(
            part if isinstance(part, bytes) else json.dumps(part, sort_keys=True, default=str).encode()
        )
    return hasher.hexdigest()


def _batch_digest(sample: Sample) -> str | None:
    """A digest of the first sampled batch, every column (dtype, shape, bytes), in column order."""
    if not sample.batches:
        return None
    parts: list[Any] = []
    for name in sorted(sample.columns):
        first = np.ascontiguousarray(sample.columns[name][0])
        parts += [name, str(first.dtype), list(first.shape), first.tobytes()]
    return _digest(*parts)


def data_facts(pipeline: Pipeline, sample: Sample | None = None) -> DataFacts:
    """The facts of one rank's training pipeline (*sample*: batches sampled from it, if any)."""
    import mindspore.dataset as ds

    from graphaudit.graph import pipeline as gp

    graph = pipeline.graph
    sources, steps, batch_size = [], [], None
    for node in sorted(graph.nodes, key=lambda n: (graph.nodes[n].get("order", 0), n)):
        data = graph.nodes[node]
        if data.get("kind") == gp.SOURCE:
            sources.append(
                SourceShard(
                    str(data.get("op", "")),
                    int(data.get("num_shards", 1)),
                    int(data.get("shard_id", 0)),
                    str(data.get("sampler") or ""),
                    str(data.get("shuffle") or ""),
                )
            )
            continue
        if batch_size is None and int(data.get("batch_size", -1)) > 0:
            batch_size = int(data["batch_size"])
        steps.append(sorted((k, str(v)) for k, v in data.items() if k not in _WHERE))
    rows = int(graph.nodes[pipeline.sink].get("rows", -1))
    try:
        seed: int | None = int(ds.config.get_seed())
    except Exception:
        seed = None
    return DataFacts(
        tuple(sources),
        rows if rows >= 0 else None,
        batch_size,
        None if sample is None else _batch_digest(sample),
        _digest(steps),
        seed,
    )


def rank_setup(net: Any, pipeline: Pipeline | None = None, sample: Sample | None = None) -> RankSetup:
    """This rank's :class:`RankSetup`: the context, *net*'s reducer, and the pipeline's facts."""
    mode, mean = parallel_context()
    return RankSetup(mode, mean, reducer_of(net), None if pipeline is None else data_facts(pipeline, sample))


def setup_of(net: Any, dataset: Any = None) -> RankSetup:
    """:func:`rank_setup` of *net* and a ``mindspore.dataset`` pipeline, its first batch sampled from a copy."""
    from graphaudit.capture.data.pipeline import capture_pipeline, check_dataset
    from graphaudit.capture.data.sampling import SamplingError, sample_pipeline

    if dataset is None:
        return rank_setup(net)
    pipeline = capture_pipeline(check_dataset(dataset, "dataset"), "train")
    try:
        sample: Sample | None = sample_pipeline(pipeline, 1, label="the training data", progress=False)
    except SamplingError:
        sample = None
    return rank_setup(net, pipeline, sample)
