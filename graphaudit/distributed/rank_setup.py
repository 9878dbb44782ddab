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
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from graphaudit.distributed.fingerprint import DataFacts, RankSetup, SourceShard

if TYPE_CHECKING:
    from graphaudit.capture.data.pipeline import Pipeline
    from graphaudit.capture.data.sampling import Sample

__all__ = ["data_facts", "first_batch", "parallel_context", "rank_setup", "reducer_of", "setup_of"]

#: Node attributes of a pipeline step that say where its rows come from, not what is done to them.
_WHERE = {"rows", "columns", "location", "order", "num_shards", "shard_id", "num_samples", "path", "pipeline"}

#: The dataset seed the first batch is sampled under, on every rank alike: an unseeded shuffle
#: draws a new order in every process, so the ranks' first batches would differ even when every
#: rank reads the whole data set. Under one seed they differ only when the ranks read different rows.
SAMPLING_SEED = 2024


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


def _shard(pipeline: Pipeline, node: str) -> tuple[int, int, int | None]:
    """``(num_shards, shard_id, seed)`` of a source: a ``DistributedSampler`` passed as ``sampler=``
    shards too (the source's own ``num_shards`` is then ``None``), and it keeps the dataset seed
    of the moment it was made (measured on MindSpore 2.10), not the one when the data are read."""
    data = pipeline.graph.nodes[node]
    sampler = getattr(pipeline.objects.get(node), "sampler", None)
    if type(sampler).__name__ == "DistributedSampler":
        seed = getattr(sampler, "seed", None)
        return (
            int(getattr(sampler, "num_shards", 1) or 1),
            int(getattr(sampler, "shard_id", 0) or 0),
            seed if isinstance(seed, int) else None,
        )
    return int(data.get("num_shards", 1)), int(data.get("shard_id", 0)), None


def data_facts(pipeline: Pipeline, sample: Sample | None = None) -> DataFacts:
    """The facts of one rank's training pipeline (*sample*: its first batch, from :func:`first_batch`)."""
    import mindspore.dataset as ds

    from graphaudit.graph import pipeline as gp

    graph = pipeline.graph
    sources, steps, batch_size, sampler_seed = [], [], None, None
    for node in sorted(graph.nodes, key=lambda n: (graph.nodes[n].get("order", 0), n)):
        data = graph.nodes[node]
        if data.get("kind") == gp.SOURCE:
            shards, shard_id, seed_of_sampler = _shard(pipeline, node)
            sampler_seed = sampler_seed if sampler_seed is not None else seed_of_sampler
            sources.append(
                SourceShard(
                    str(data.get("op", "")),
                    shards,
                    shard_id,
                    str(data.get("sampler") or ""),
                    str(data.get("shuffle") or ""),
                )
            )
            continue
        if batch_size is None and int(data.get("batch_size", -1)) > 0:
            batch_size = int(data["batch_size"])
        steps.append(sorted((k, str(v)) for k, v in data.items() if k not in _WHERE))
    rows = int(graph.nodes[pipeline.sink].get("rows", -1))
    try:  # a distributed sampler shuffles with the seed it was made with
        seed: int | None = sampler_seed if sampler_seed is not None else int(ds.config.get_seed())
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


@contextmanager
def _dataset_seed(seed: int) -> Iterator[None]:
    """MindSpore's dataset seed set to *seed*, then back: ``_config`` directly, because
    ``ds.config.set_seed`` also reseeds ``random`` and ``numpy.random`` (an audit changes no RNG);
    the default seed restored means "unseeded" again to MindSpore."""
    try:
        from mindspore.dataset.core.config import _config
    except ImportError:  # another MindSpore layout: sampled under the user's seed (GA802 may then miss)
        yield
        return
    old = _config.get_seed()
    _config.set_seed(seed)
    try:
        yield
    finally:
        _config.set_seed(old)


def first_batch(pipeline: Pipeline) -> Sample | None:
    """The first batch of a copy of *pipeline*, sampled under :data:`SAMPLING_SEED` (``None`` when it cannot be)."""
    from graphaudit.capture.data.sampling import SamplingError, sample_pipeline

    try:
        with _dataset_seed(SAMPLING_SEED):
            return sample_pipeline(pipeline, 1, label="the training data", progress=False)
    except SamplingError:
        return None


def rank_setup(net: Any, pipeline: Pipeline | None = None, sample: Sample | None = None) -> RankSetup:
    """This rank's :class:`RankSetup`: the context, *net*'s reducer, and the pipeline's facts."""
    mode, mean = parallel_context()
    return RankSetup(mode, mean, reducer_of(net), None if pipeline is None else data_facts(pipeline, sample))


def setup_of(net: Any, dataset: Any = None) -> RankSetup:
    """:func:`rank_setup` of *net* and a ``mindspore.dataset`` pipeline, its first batch from :func:`first_batch`."""
    from graphaudit.capture.data.pipeline import capture_pipeline, check_dataset

    if dataset is None:
        return rank_setup(net)
    pipeline = capture_pipeline(check_dataset(dataset, "dataset"), "train")
    return rank_setup(net, pipeline, first_batch(pipeline))
