"""graphaudit.to_networkx(dataset): a mindspore.dataset pipeline captured as a graph, without iterating it.

Real pipelines over data written to ``tmp_path``: ImageFolderDataset (PNG and JPEG),
MindDataset (FileWriter), CSVDataset, NumpySlicesDataset, GeneratorDataset, with
``mindspore.dataset.vision`` / ``transforms`` operations.
"""

from __future__ import annotations

import json

import mindspore as ms
import mindspore.dataset as ds
import mindspore.dataset.transforms as transforms
import mindspore.dataset.vision as vision
import networkx as nx
import numpy as np
import pytest
from dataset_files import csv_file, image_folder, mindrecord

import graphaudit
from graphaudit.capture.data.pipeline import CACHES, capture_pipeline, pipeline_graph, walk
from graphaudit.capture.data.sampling import sample_pipeline
from graphaudit.errors import ArgumentTypeError, InputError
from graphaudit.graph import pipeline as gp

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def image_pipeline(folder: str) -> ds.Dataset:
    train = ds.ImageFolderDataset(folder, shuffle=True)
    train = train.map(
        [
            vision.Decode(),
            vision.RandomResizedCrop(6),
            vision.RandomHorizontalFlip(),
            vision.Rescale(1 / 255, 0),
            vision.Normalize(MEAN, STD),
            vision.HWC2CHW(),
        ],
        input_columns="image",
    )
    train = train.map(transforms.TypeCast(ms.int32), input_columns="label")
    return train.shuffle(16).batch(4, drop_remainder=False).repeat(2)


def attrs_of(graph: nx.MultiDiGraph, path: str) -> dict:
    return graph.nodes[gp.pipeline_node(path)]


def test_an_image_pipeline_is_one_node_per_step_in_data_flow_order(tmp_path):
    graph = graphaudit.to_networkx(image_pipeline(image_folder(tmp_path)))
    assert gp.is_pipeline_graph(graph) and graph.graph["serialised"]
    assert [d["path"] for _, d in gp.steps(graph)] == [
        "dataset/ImageFolderDataset#1",
        "dataset/map#1",
        "dataset/map#2",
        "dataset/shuffle#1",
        "dataset/batch#1",
        "dataset/repeat#1",
    ]
    feeds = [
        (graph.nodes[s]["path"], graph.nodes[t]["path"])
        for s, t, d in graph.edges(data=True)
        if d["kind"] == gp.FEEDS
    ]
    assert feeds[0] == ("dataset/ImageFolderDataset#1", "dataset/map#1") and len(feeds) == 5
    source = attrs_of(graph, "dataset/ImageFolderDataset#1")
    assert (
        source["kind"] == gp.SOURCE and source["shuffle"] == "global" and source["sampler"] == "RandomSampler"
    )
    assert source["rows"] == 16 and json.loads(source["columns"]) == ["image", "label"]
    assert (
        attrs_of(graph, "dataset/batch#1")["batch_size"] == 4
        and attrs_of(graph, "dataset/batch#1")["rows"] == 4
    )
    assert attrs_of(graph, "dataset/batch#1")["drop_remainder"] is False
    assert attrs_of(graph, "dataset/shuffle#1")["buffer_size"] == 16
    assert (
        attrs_of(graph, "dataset/repeat#1")["count"] == 2 and attrs_of(graph, "dataset/repeat#1")["rows"] == 8
    )
    assert attrs_of(graph, "dataset/map#1")["op_type"] == "Map"


def test_each_transform_of_a_map_is_a_node_with_its_arguments(tmp_path):
    graph = graphaudit.to_networkx(image_pipeline(image_folder(tmp_path)))
    names = [graph.nodes[t]["name"] for t in gp.transforms_of(graph, gp.pipeline_node("dataset/map#1"))]
    assert names == ["Decode", "RandomResizedCrop", "RandomHorizontalFlip", "Rescale", "Normalize", "HWC2CHW"]
    normalize = json.loads(attrs_of(graph, "dataset/map#1/Normalize")["params"])
    assert np.allclose(normalize["mean"], MEAN) and np.allclose(normalize["std"], STD)
    assert json.loads(attrs_of(graph, "dataset/map#1/RandomResizedCrop")["params"])["size"] == [6, 6]
    assert attrs_of(graph, "dataset/map#1/RandomResizedCrop")["random"] is True
    assert attrs_of(graph, "dataset/map#1/Normalize")["random"] is False
    assert attrs_of(graph, "dataset/map#1/HWC2CHW")["op_type"] == "HwcToChw"  # MindSpore's own name
    assert json.loads(attrs_of(graph, "dataset/map#2/TypeCast")["params"]) == {"data_type": "int32"}
    assert json.loads(attrs_of(graph, "dataset/map#2/TypeCast")["columns"]) == ["label"]


def test_the_graph_round_trips_through_graphml(tmp_path):
    graph = graphaudit.to_networkx(image_pipeline(image_folder(tmp_path / "data")))
    nx.write_graphml(graph, tmp_path / "pipeline.graphml")
    back = nx.read_graphml(tmp_path / "pipeline.graphml", force_multigraph=True)
    assert set(back.nodes) == set(graph.nodes)
    for node, attrs in graph.nodes(data=True):
        assert back.nodes[node] == attrs
    assert sorted((s, t, d["kind"]) for s, t, d in back.edges(data=True)) == sorted(
        (s, t, d["kind"]) for s, t, d in graph.edges(data=True)
    )


@pytest.mark.parametrize("which", ["mindrecord", "csv", "numpy", "generator", "jpeg"])
def test_every_kind_of_source_is_captured_with_its_order_and_size(tmp_path, which):
    def rows():
        for i in range(5):
            yield np.full(3, i, np.float32), np.int32(i % 2)

    made = {
        "mindrecord": lambda: ds.MindDataset(mindrecord(tmp_path, rows=12), shuffle=False),
        "csv": lambda: ds.CSVDataset(
            csv_file(tmp_path, [0, 1, 0, 1]), column_defaults=[0.0, 0.0, 0], column_names=["a", "b", "label"]
        ),
        "numpy": lambda: ds.NumpySlicesDataset({"x": np.zeros((7, 2)), "label": np.zeros(7)}, shuffle=False),
        "generator": lambda: ds.GeneratorDataset(rows, ["x", "label"], shuffle=False),
        "jpeg": lambda: ds.ImageFolderDataset(image_folder(tmp_path, ext="jpg"), decode=True),
    }
    expected = {
        "mindrecord": ("MindDataset", "none", 12),
        "csv": ("CSVDataset", "global", 4),
        "numpy": ("NumpySlicesDataset", "none", 7),
        "generator": ("GeneratorDataset", "none", -1),  # no __len__: MindSpore would have to run it to count
        "jpeg": ("ImageFolderDataset", "global", 16),
    }
    graph = graphaudit.to_networkx(made[which]().batch(2))
    source = graph.nodes[gp.sources_of(graph)[0]]
    assert (source["op"], source["shuffle"], source["rows"]) == expected[which]
    assert {d["kind"] for _, d in graph.nodes(data=True)} <= gp.PIPELINE_NODE_KINDS
    assert {d["kind"] for _, _, d in graph.edges(data=True)} <= gp.PIPELINE_EDGE_KINDS
    for _, attrs in graph.nodes(data=True):
        assert all(isinstance(v, (str, int, float, bool)) for v in attrs.values()), attrs


def test_concat_zip_take_skip_project_rename_and_their_columns():
    a = ds.NumpySlicesDataset({"x": np.zeros((6, 2), np.float32)}, shuffle=False)
    b = ds.NumpySlicesDataset({"y": np.zeros(6, np.int32)}, shuffle=False)
    c = ds.NumpySlicesDataset({"x": np.ones((4, 2), np.float32)}, shuffle=False)
    zipped = ds.zip((a.concat(c).take(6), b)).skip(1).rename(["y"], ["label"]).project(["label", "x"])
    graph = graphaudit.to_networkx(zipped)
    ops = [d["op"] for _, d in gp.steps(graph)]
    assert ops == [
        "NumpySlicesDataset",
        "NumpySlicesDataset",
        "concat",
        "take",
        "NumpySlicesDataset",
        "zip",
        "skip",
        "rename",
        "project",
    ]
    zip_node = gp.pipeline_node("dataset/zip#1")
    assert sorted(d["index"] for _, _, d in graph.in_edges(zip_node, data=True)) == [0, 1]
    assert json.loads(graph.nodes[zip_node]["columns"]) == ["x", "y"]
    assert json.loads(attrs_of(graph, "dataset/project#1")["columns"]) == ["label", "x"]
    assert attrs_of(graph, "dataset/take#1")["count"] == 6 and attrs_of(graph, "dataset/skip#1")["rows"] == 5
    assert gp.sink_of(graph) == gp.pipeline_node("dataset/project#1")


def test_a_transform_mindspore_cannot_serialise_is_read_from_its_attributes():
    def double(x):
        return x * 2

    data = ds.NumpySlicesDataset({"x": np.zeros((4, 3), np.float32)}, shuffle=False).map(
        [double, vision.LinearTransformation(np.eye(3, dtype=np.float32), np.zeros(3, np.float32))], "x"
    )
    graph = graphaudit.to_networkx(data.batch(2))
    assert graph.graph["serialised"] is False  # to_json() fails on the ndarray argument
    transforms_ = [graph.nodes[t] for t in gp.transforms_of(graph, gp.pipeline_node("dataset/map#1"))]
    assert [(t["name"], t["python"]) for t in transforms_] == [
        ("double", True),
        ("LinearTransformation", False),
    ]
    assert json.loads(transforms_[1]["params"])["mean_vector"] == [0.0, 0.0, 0.0]
    assert attrs_of(graph, "dataset/batch#1")["batch_size"] == 2  # the rest is still read


def test_capturing_and_sampling_change_nothing_on_the_dataset_objects(tmp_path):
    pipeline = image_pipeline(image_folder(tmp_path))
    before = [{a: getattr(o, a) for a in CACHES if hasattr(o, a)} for o in walk(pipeline)]
    before = [{a: (list(v) if isinstance(v, list) else v) for a, v in d.items()} for d in before]
    parents = [o.parent for o in walk(pipeline)]
    sample_pipeline(capture_pipeline(pipeline, "train"), 2)
    after = [{a: getattr(o, a) for a in CACHES if hasattr(o, a)} for o in walk(pipeline)]
    assert after == before
    assert all(o.parent is p for o, p in zip(walk(pipeline), parents))


def test_to_networkx_refuses_inputs_for_a_dataset_and_other_objects_still_raise():
    data = ds.NumpySlicesDataset({"x": np.zeros(3)})
    with pytest.raises(InputError, match="takes no inputs"):
        graphaudit.to_networkx(data, inputs=np.zeros(3))
    with pytest.raises(graphaudit.NotACellError):
        graphaudit.to_networkx([1, 2, 3])
    with pytest.raises(ArgumentTypeError, match="NumpySlicesDataset"):
        pipeline_graph([1, 2, 3])


def test_the_pipeline_name_prefixes_every_id_and_path():
    graph = pipeline_graph(ds.NumpySlicesDataset({"x": np.zeros(3)}).batch(1), "eval")
    assert all(n.startswith("ds:eval/") and d["path"].startswith("eval/") for n, d in graph.nodes(data=True))
    assert graph.graph["pipeline"] == "eval"


def test_a_source_shared_by_two_pipelines_is_captured_and_its_links_kept():
    base = ds.NumpySlicesDataset({"x": np.zeros(4, np.float32), "label": np.zeros(4, np.int32)})
    train, other = base.batch(2), base.batch(1)
    top = train.repeat(2)
    graph = graphaudit.to_networkx(train)
    assert [d["op"] for _, d in gp.steps(graph)] == ["NumpySlicesDataset", "batch"]
    consumers = lambda node: [ref() for ref in node.parent]  # noqa: E731 - MindSpore keeps weak references
    assert consumers(train) == [top] and consumers(base) == [train, other]
    report = graphaudit.audit_dataset(train)
    assert "not a tree" in report.skipped["GA003"] and consumers(train) == [top]
