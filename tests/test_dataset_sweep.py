"""Every operation and option of mindspore.dataset 2.x is read, or reported unreadable: none raises.

A ``map(..., python_multiprocessing=True)`` serialises as ``"operations": [None]`` in
MindSpore 2.10's ``to_json()``; before, the capture failed with an InternalError. Each
pipeline below is captured (structure only: no row is read) and audited as data; every map's
transforms must be drawn, by name from MindSpore's JSON or the Python object, or marked
``(unreadable)``.
"""

from __future__ import annotations

import mindspore.dataset as ds
import mindspore.dataset.transforms as T
import mindspore.dataset.vision as V
import numpy as np
import pytest

import graphaudit
from graphaudit.capture.data.pipeline import UNREADABLE, capture_pipeline
from graphaudit.graph import pipeline as gp


def _rows(n: int = 16) -> ds.Dataset:
    return ds.NumpySlicesDataset(
        {"x": np.arange(n * 2, dtype=np.float32).reshape(n, 2), "label": np.arange(n) % 2}, shuffle=False
    )


def _generator() -> ds.Dataset:
    def rows():
        for i in range(16):
            yield np.full((2,), i, np.float32), np.array(i % 2, np.int32)

    return ds.GeneratorDataset(rows, ["x", "label"], shuffle=False)


def _double(x):
    return x * 2


def _per_batch(x, label, info):
    return x, label


PIPELINES = {
    "numpy-slices": lambda: _rows(),
    "generator": lambda: _generator(),
    "generator-random-access": lambda: ds.GeneratorDataset(
        [(np.zeros(2, np.float32), np.int32(0))] * 4, ["x", "label"]
    ),
    "map-pyfunc": lambda: _rows().map(_double, "x"),
    "map-lambda": lambda: _rows().map(lambda x: x + 1, "x"),
    "map-c-transform": lambda: _rows().map(T.TypeCast(np.float16), "x"),
    "map-compose": lambda: _rows().map(T.Compose([T.TypeCast(np.float16), _double]), "x"),
    "map-list": lambda: _rows().map([T.TypeCast(np.float16), _double], "x"),
    "map-multiprocessing": lambda: _rows().map(
        _double, "x", python_multiprocessing=True, num_parallel_workers=2
    ),
    "map-multiprocessing-mixed": lambda: _rows().map(
        [T.TypeCast(np.float32), _double], "x", python_multiprocessing=True
    ),
    "map-workers": lambda: _rows().map(_double, "x", num_parallel_workers=2),
    "map-output-columns": lambda: _rows().map(lambda x: (x, x), "x", output_columns=["x", "y"]),
    "map-max-rowsize": lambda: _rows().map(_double, "x", python_multiprocessing=True, max_rowsize=4),
    "map-cache-off": lambda: _rows().map(_double, "x", cache=None),
    "map-callbacks-none": lambda: _rows().map(_double, "x", callbacks=None),
    "map-vision": lambda: _rows().map(V.RandomHorizontalFlip(), "x"),
    "batch": lambda: _rows().batch(4),
    "batch-drop": lambda: _rows().batch(4, drop_remainder=True),
    "batch-per-batch-map": lambda: _rows().batch(4, per_batch_map=_per_batch, input_columns=["x", "label"]),
    "batch-per-batch-map-mp": lambda: _rows().batch(
        4, per_batch_map=_per_batch, input_columns=["x", "label"], python_multiprocessing=True
    ),
    "padded-batch": lambda: _rows().padded_batch(4, pad_info={"x": ([3], 0.0)}),
    "bucket-batch": lambda: _rows().bucket_batch_by_length(["x"], [5], [4, 4]),
    "filter": lambda: _rows().filter(lambda x: True, input_columns=["x"]),
    "filter-workers": lambda: _rows().filter(lambda x: True, input_columns=["x"], num_parallel_workers=2),
    "shuffle-repeat-take-skip": lambda: _rows().shuffle(8).repeat(2).skip(1).take(10),
    "project-rename": lambda: _rows().project(["x", "label"]).rename(["x"], ["features"]),
    "sync-wait": lambda: _rows().sync_wait(condition_name="policy", callback=None).batch(4),
    "concat": lambda: _rows() + _generator(),
    "concat-mixed": lambda: (
        _rows().map(_double, "x", python_multiprocessing=True) + _generator().map(_double, "x")
    ),
    "zip": lambda: ds.zip((_rows(), _generator().rename(["x", "label"], ["x2", "label2"]))),
    "zip-mixed": lambda: ds.zip(
        (
            _rows().map(_double, "x", python_multiprocessing=True),
            _generator().rename(["x", "label"], ["a", "b"]),
        )
    ),
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_every_operation_is_read_or_reported_unreadable(name: str) -> None:
    data = PIPELINES[name]()
    graph = capture_pipeline(data, "train").graph
    for node, attrs in graph.nodes(data=True):
        if attrs["kind"] == gp.TRANSFORM:
            assert attrs["name"] and (attrs["name"] != UNREADABLE or attrs.get("unreadable")), (node, attrs)
    report = graphaudit.audit_dataset(data, batches=0)  # structure only: no row is read
    assert report.datasets["train"].number_of_nodes() == graph.number_of_nodes()


def test_a_multiprocessing_map_is_drawn_with_its_transform() -> None:
    graph = capture_pipeline(PIPELINES["map-multiprocessing-mixed"](), "train").graph
    names = [d["name"] for _, d in graph.nodes(data=True) if d["kind"] == gp.TRANSFORM]
    assert names == ["TypeCast", "_double"]


def _triple(x):
    return x * 3


def test_a_multiprocessing_compose_of_functions_is_read_by_function_name() -> None:
    """``Compose`` wraps each Python function in a FuncWrapper: drawn as the function, not ``FuncWrapper``."""
    data = _rows().map(T.Compose([_double, _triple]), "x", python_multiprocessing=True)
    graph = capture_pipeline(data, "train").graph
    names = [d["name"] for _, d in graph.nodes(data=True) if d["kind"] == gp.TRANSFORM]
    assert names == ["_double", "_triple"]


def test_a_multiprocessing_map_keeps_every_check_that_reads_it() -> None:
    """MindSpore's JSON gives such a map as ``[None]``: the checks read it from the Python
    objects, and report, run and skip exactly what they do without multiprocessing."""

    def audited(multiprocessing: bool) -> tuple[set[str], list[str], list[str], list[str]]:
        def pipeline(second) -> ds.Dataset:
            stage = T.Compose([_double, second])
            return _rows(32).map(stage, "x", python_multiprocessing=multiprocessing).batch(4)

        report = graphaudit.audit_dataset(
            pipeline(V.Rescale(1 / 255, 0)), pipeline(_triple), num_classes=2, batches=1
        )
        graph = report.datasets["train"]
        return (
            {f.check_id for f in report.findings},
            [d["name"] for _, d in graph.nodes(data=True) if d["kind"] == gp.TRANSFORM],
            sorted(report.checks_run),
            sorted(n.check_id for n in report.not_run),
        )

    plain, multiprocessing = audited(False), audited(True)
    assert plain[0] and plain[1] == ["_double", "Rescale"]
    assert multiprocessing == plain
