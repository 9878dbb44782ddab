"""The whole label column of a pipeline, when it can be read cheaply, without running the pipeline.

Class counts from a sample are estimates; from the source they are exact. They are read from
the source when the labels the network gets are the source's own: the pipeline has one
source, its sampler visits every row (shards together do), and between the source and the
network nothing drops rows (``filter``, ``take``, ``skip``) or rewrites the label column
other than ``TypeCast`` / ``OneHot``. Then:

- ``ImageFolderDataset``: the files of each class folder are counted as MindSpore lists them
  (every regular file, or those with the given ``extensions``; classes from ``class_indexing``
  or the sorted folder names), and the total must equal MindSpore's own count of the rows;
- ``NumpySlicesDataset``: the label array is held in memory;
- ``MindDataset`` (up to :data:`MAX_ROWS` rows) and ``CSVDataset`` (up to 64 MiB of files):
  a second pipeline reading only the label column.

Example:
    >>> import numpy as np
    >>> import mindspore.dataset as ds
    >>> from graphaudit.capture.data.pipeline import capture_pipeline
    >>> data = ds.NumpySlicesDataset({"x": np.zeros((6, 2)), "label": [0, 0, 0, 0, 1, 2]}).batch(2)
    >>> column = whole_label_column(capture_pipeline(data, "train"), "label")
    >>> column.counts, column.where
    ({0: 4, 1: 1, 2: 1}, 'the whole label column (6 rows held by the NumpySlicesDataset)')
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphaudit.capture.data import operations as ops
from graphaudit.capture.data.pipeline import Pipeline
from graphaudit.graph import pipeline as gp

__all__ = ["MAX_ROWS", "LabelColumn", "label_counts", "whole_label_column"]

MAX_ROWS = 2_000_000
_KEEPS_LABELS = frozenset({"TypeCast", "OneHot"})
_ROW_DROPPING = frozenset({"filter", "take", "skip", "concat", "zip", "bucket_batch_by_length"})
_PARTIAL_SAMPLERS = frozenset({"SubsetSampler", "SubsetRandomSampler", "WeightedRandomSampler", "PKSampler"})


@dataclass(frozen=True)
class LabelColumn:
    """Class counts over the whole label column, and where they were read (in words)."""

    counts: dict[int, int]
    where: str

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def label_counts(values: np.ndarray) -> dict[int, int] | None:
    """Counts per class of class-index labels (or one-hot rows); ``None`` for other labels.

    Example:
        >>> label_counts(np.array([2, 0, 2])), label_counts(np.eye(3)[[1, 1, 2]])
        ({0: 1, 2: 2}, {1: 2, 2: 1})
        >>> label_counts(np.array([0.5, 1.5])) is None
        True
    """
    array = np.asarray(values)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim == 2 and array.shape[1] > 1:
        if array.size and np.isin(array, (0, 1)).all() and (array.sum(axis=1) == 1).all():
            array = array.argmax(axis=1)
        else:
            return None
    if array.ndim != 1 or (
        array.dtype.kind not in "iub"
        and not (
            array.dtype.kind == "f"
            and array.size
            and np.isfinite(array).all()
            and (array == np.round(array)).all()
        )
    ):
        return None
    found, counts = np.unique(array.astype(np.int64), return_counts=True)
    return {int(k): int(v) for k, v in zip(found, counts)}


def _label_kept(pipeline: Pipeline, column: str) -> bool:
    graph = pipeline.graph
    for node, attrs in gp.steps(graph):
        if attrs["op"] in _ROW_DROPPING:
            return False
        if attrs["op"] == "rename" and column in json.loads(attrs.get("output_columns", "[]")):
            return False
        if attrs["op"] == "map" and column in json.loads(attrs.get("input_columns", "[]")):
            names = {graph.nodes[t]["name"] for t in gp.transforms_of(graph, node)}
            if not names <= _KEEPS_LABELS:
                return False
    return True


def _image_folder(source: Any, rows: int) -> tuple[dict[int, int], str] | None:
    folder = source.dataset_dir
    indexing = dict(getattr(source, "class_indexing", None) or {})
    extensions = set(getattr(source, "extensions", None) or [])
    if getattr(source, "decrypt", None) is not None:
        return None
    classes = indexing or {
        name: i for i, name in enumerate(sorted(e.name for e in os.scandir(folder) if e.is_dir()))
    }
    counts: dict[int, int] = {}
    for name, index in classes.items():
        path = os.path.join(folder, name)
        if not os.path.isdir(path):
            continue
        found = sum(
            1
            for e in os.scandir(path)
            if e.is_file() and (not extensions or os.path.splitext(e.name)[1] in extensions)
        )
        counts[index] = counts.get(index, 0) + found
    total = sum(counts.values())
    if rows >= 0 and total != rows:
        return None  # MindSpore lists the files differently: trust only a count that agrees with it
    return counts, f"the whole label column ({total} files in {len(counts)} class folders of {folder})"


def _numpy_slices(source: Any, column: str) -> tuple[dict[int, int], str] | None:
    held = getattr(source, "source", None)
    names = list(getattr(held, "column_list", None) or [])
    data = getattr(held, "data", None)
    if column not in names or data is None:
        return None
    counts = label_counts(np.asarray(data[names.index(column)]))
    if counts is None:
        return None
    return counts, f"the whole label column ({sum(counts.values())} rows held by the NumpySlicesDataset)"


def _reread(source: Any, column: str, rows: int) -> tuple[dict[int, int], str] | None:
    import mindspore.dataset as ds

    name = type(source).__name__
    if name == "MindDataset":
        if not 0 <= rows <= MAX_ROWS:
            return None
        files = source.dataset_files
        reader = ds.MindDataset(files, columns_list=[column], shuffle=False, num_parallel_workers=1)
    elif name == "CSVDataset":
        if not ops.size_is_cheap(source):
            return None
        reader = ds.CSVDataset(
            source.dataset_files,
            field_delim=source.field_delim,
            column_defaults=source.column_defaults,
            column_names=source.column_names,
            shuffle=False,
        ).project([column])
    else:
        return None
    values = [row[column] for row in reader.create_dict_iterator(num_epochs=1, output_numpy=True)]
    counts = label_counts(np.stack(values)) if values else None
    if counts is None:
        return None
    return counts, f"the whole label column ({sum(counts.values())} rows, re-read from the {name}'s files)"


def whole_label_column(pipeline: Pipeline, column: str) -> LabelColumn | None:
    """The class counts of the whole label column *column*, or ``None`` when not cheap (see the module)."""
    sources = gp.sources_of(pipeline.graph)
    if len(sources) != 1 or not _label_kept(pipeline, column):
        return None
    attrs = pipeline.graph.nodes[sources[0]]
    if attrs["sampler"] in _PARTIAL_SAMPLERS or attrs["num_samples"]:
        return None
    source = pipeline.objects[sources[0]]
    rows = attrs["rows"] if attrs["num_shards"] == 1 else -1
    try:
        if attrs["op"] == "ImageFolderDataset":
            found = _image_folder(source, rows)
        elif attrs["op"] == "NumpySlicesDataset":
            found = _numpy_slices(source, column)
        else:
            found = _reread(source, column, attrs["rows"] * attrs["num_shards"])
    except Exception:  # unreadable folder or file: the sample will do
        return None
    return None if found is None else LabelColumn(*found)
