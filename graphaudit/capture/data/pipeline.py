"""Capture a ``mindspore.dataset`` pipeline as a graph, from MindSpore's own description of it.

The pipeline is read without iterating it: the op tree (each dataset object's
``children``: what the user built) gives the steps and their order, and MindSpore's JSON
serialisation (``Dataset.to_json()``) gives the parameters of every step and transform as
MindSpore understood them (the ``Normalize`` mean and std, the ``Resize`` sizes, the sampler
of a source). Where the JSON says nothing (a ``MindDataset`` or a ``GeneratorDataset``
serialises without its sampler; a Python transform may not serialise at all) the objects'
own attributes are read. The columns and the number of rows of each step are asked of
MindSpore (``get_col_names()``, ``get_dataset_size()``), the latter only when MindSpore can
count without running the pipeline (:func:`~graphaudit.capture.data.operations.size_is_cheap`).

Capturing changes nothing: the size and column caches MindSpore keeps on the dataset
objects, and the ``parent`` lists it empties while serialising, are put back as they were.
The vocabulary of the graph is in :mod:`graphaudit.graph.pipeline`.

Example:
    >>> import numpy as np
    >>> import mindspore.dataset as ds
    >>> data = ds.NumpySlicesDataset({"x": np.zeros((10, 2), np.float32)}, shuffle=False).batch(4)
    >>> graph = pipeline_graph(data, "train")
    >>> [(d["path"], d["rows"]) for _, d in gp.steps(graph)]
    [('train/NumpySlicesDataset#1', 10), ('train/batch#1', 3)]
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from graphaudit.capture.data import operations as ops
from graphaudit.errors import ArgumentTypeError
from graphaudit.graph import pipeline as gp
from graphaudit.version import __version__

__all__ = ["Pipeline", "capture_pipeline", "check_dataset", "is_dataset", "pipeline_graph", "walk"]

#: Attributes in which MindSpore caches what it computed about a dataset object.
CACHES = (
    "parent",
    "dataset_size",
    "_col_names",
    "saved_output_types",
    "saved_output_shapes",
    "estimated_output_shapes",
    "_batch_size",
    "_num_classes",
    "_repeat_count",
    "_class_indexing",
)
_NOT_PARAMS = ("children", "operations", "callback", "op_type")


@dataclass
class Pipeline:
    """A captured pipeline: its graph, and the dataset object behind each step node."""

    name: str
    graph: nx.MultiDiGraph
    root: Any
    objects: dict[str, Any] = field(default_factory=dict)

    @property
    def sink(self) -> str:
        """The node of the dataset object the pipeline was captured from."""
        found = gp.sink_of(self.graph)
        assert found is not None
        return found


def is_dataset(obj: Any) -> bool:
    """Whether *obj* is a ``mindspore.dataset.Dataset`` (without importing MindSpore for other objects)."""
    return any(
        cls.__name__ == "Dataset" and cls.__module__.startswith("mindspore.dataset")
        for cls in type(obj).__mro__
    )


def check_dataset(obj: Any, what: str = "dataset") -> Any:
    """*obj* when it is a dataset pipeline; otherwise an :class:`~graphaudit.errors.ArgumentTypeError`."""
    if is_dataset(obj):
        return obj
    hint = ""
    if isinstance(obj, type):
        hint = " Pass an instance (the pipeline you would give Model.train), not the class."
    elif hasattr(obj, "__iter__"):
        hint = (
            " Wrap Python data in a pipeline first, e.g. ds.NumpySlicesDataset({'image': x, 'label': y}) or "
            "ds.GeneratorDataset(source, ['image', 'label'])."
        )
    raise ArgumentTypeError(
        f"{what}= expects a mindspore.dataset pipeline (a mindspore.dataset.Dataset such as "
        f"ImageFolderDataset(...).map(...).batch(32)), got {type(obj).__name__}.{hint}"
    )


def walk(root: Any) -> list[Any]:
    """Every dataset object of the pipeline ending at *root*, sources first (post-order, each once)."""
    order: list[Any] = []
    seen: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(node.children))
    return order


@contextmanager
def kept_caches(objects: list[Any]) -> Iterator[None]:
    """Put back MindSpore's caches on *objects* (and their ``parent`` lists) afterwards."""
    saved = [(obj, {a: getattr(obj, a) for a in CACHES if hasattr(obj, a)}) for obj in objects]
    parents = [
        (obj, obj.parent, list(obj.parent))
        for obj in objects
        if isinstance(getattr(obj, "parent", None), list)
    ]
    try:
        yield
    finally:
        for obj, attrs in saved:
            for attr, value in attrs.items():
                setattr(obj, attr, value)
        for obj, same_list, members in parents:  # the same list object, with the same members
            same_list[:] = members
            obj.parent = same_list


def _compatible(node: Any, tree: dict[str, Any]) -> bool:
    op_type = str(tree.get("op_type", ""))
    if not node.children:
        return op_type.endswith("Dataset")
    return type(node).__name__ == f"{op_type}Dataset"


def _serialised(root: Any) -> tuple[dict[int, dict[str, Any]], bool]:
    """MindSpore's JSON of each step, by object id; and whether the whole pipeline serialised."""
    found: dict[int, dict[str, Any]] = {}

    def pair(node: Any, tree: Any) -> None:
        if not isinstance(tree, dict) or not _compatible(node, tree):
            return  # MindSpore rewrote this part of the tree (a batch sampler adds a batch)
        found[id(node)] = tree
        kids = tree.get("children") or []
        if len(kids) == len(node.children):
            for child, sub in zip(node.children, kids):
                pair(child, sub)

    def attempt(node: Any, tried: set[int]) -> bool:
        if id(node) in tried:
            return False
        tried.add(id(node))
        try:
            tree = node.to_json()
        except Exception:  # a transform MindSpore cannot serialise, or a node with two consumers
            for child in node.children:
                attempt(child, tried)
            return False
        pair(node, tree)
        return True

    whole = attempt(root, set())
    return found, whole


#: What a transform MindSpore's JSON does not describe, nor the Python object, is drawn as.
UNREADABLE = "(unreadable)"


def _json_transforms(operations: list[Any], python: list[Any] | None = None) -> Iterator[dict[str, Any]]:
    """The transforms of a map, from MindSpore's JSON; one it gives as ``None`` (a map with
    ``python_multiprocessing=True``) is read from the Python object at the same place of
    *python*, or marked :data:`UNREADABLE`."""
    for index, op in enumerate(operations):
        if not isinstance(op, dict):
            if python is not None and len(python) == len(operations):
                yield from _python_transforms([python[index]])
            else:
                yield {"name": UNREADABLE, "op_type": "", "params": {}, "python": True, "unreadable": True}
            continue
        name = ops.canonical_transform(str(op.get("tensor_op_name", "?")))
        params = dict(op.get("tensor_op_params") or {})
        inner = params.pop("transforms", None) or []
        if name == "Compose":
            yield from _json_transforms(inner)
            continue
        inner = [t for t in inner if isinstance(t, dict)] if isinstance(inner, list) else []
        module = str(op.get("python_module", ""))
        python = "tensor_op_params" not in op or module.endswith("py_transforms_util")
        for key in ("implementation", "device_target", "random"):
            params.pop(key, None)
        if inner:
            params["transforms"] = [ops.canonical_transform(str(t.get("tensor_op_name", "?"))) for t in inner]
        if python:
            params = {"python_module": module} if module else {}
        yield {"name": name, "op_type": str(op.get("tensor_op_name", "")), "params": params, "python": python}


def _python_transforms(operations: list[Any]) -> Iterator[dict[str, Any]]:
    for op in operations:
        if type(op).__name__ == "Compose":
            yield from _python_transforms(list(getattr(op, "transforms", [])))
            continue
        if type(op).__name__ == "FuncWrapper" and callable(getattr(op, "transform", None)):
            op = op.transform  # how a Compose holds a Python function: named by the function
        function = inspect.isfunction(op) or inspect.ismethod(op) or inspect.isbuiltin(op)
        name = op.__name__ if function else type(op).__name__
        python = function or not (type(op).__module__ or "").startswith("mindspore.dataset")
        params = {} if python else ops.python_params(op)
        inner = getattr(op, "transforms", None)
        if name in ops.CONTAINERS and inner:
            params["transforms"] = [type(t).__name__ for t in inner]
        yield {"name": str(name), "op_type": "", "params": params, "python": python}


def _list(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]


def _step_attrs(obj: Any) -> dict[str, Any]:
    """The attributes checks read, from the dataset object (what the user set)."""
    name = type(obj).__name__
    attrs: dict[str, Any] = {}
    if not obj.children:
        shuffle, sampler = ops.source_shuffle(obj)
        sampler_obj = getattr(obj, "sampler", None)
        attrs |= {
            "shuffle": shuffle,
            "sampler": sampler,
            "num_shards": int(getattr(obj, "num_shards", None) or 1),
            "shard_id": int(getattr(obj, "shard_id", None) or 0),
            "num_samples": int(
                getattr(sampler_obj, "num_samples", None) or getattr(obj, "num_samples", 0) or 0
            ),
            "location": ops.source_location(obj),
        }
    elif name == "BatchDataset":
        size = getattr(obj, "batch_size", None)
        attrs |= {
            "batch_size": size if isinstance(size, int) else -1,
            "drop_remainder": bool(getattr(obj, "drop_remainder", False)),
            "per_batch_map": getattr(obj, "per_batch_map", None) is not None,
        }
    elif name == "ShuffleDataset":
        attrs["buffer_size"] = int(getattr(obj, "buffer_size", 0))
    elif name in ("RepeatDataset", "TakeDataset", "SkipDataset"):
        attrs["count"] = int(getattr(obj, "count", -1))
    if name in ("MapDataset", "RenameDataset"):
        attrs["input_columns"] = gp.json_attr(_list(getattr(obj, "input_columns", None)))
        attrs["output_columns"] = gp.json_attr(_list(getattr(obj, "output_columns", None)))
    if name == "ProjectDataset":
        attrs["output_columns"] = gp.json_attr(_list(getattr(obj, "columns", None)))
    return attrs


def _asked(obj: Any, cheap: bool) -> tuple[str, int]:
    """The columns and rows MindSpore reports for *obj* (``""`` / -1 when it cannot say cheaply)."""
    try:
        columns = gp.json_attr([str(c) for c in obj.get_col_names()])
    except Exception:
        columns = ""
    rows = -1
    if cheap:
        try:
            rows = int(obj.get_dataset_size())
        except Exception:
            rows = -1
    return columns, rows


def capture_pipeline(dataset: Any, name: str = "dataset") -> Pipeline:
    """Capture the pipeline ending at *dataset* as a :class:`Pipeline` whose graph is called *name*."""
    import mindspore as ms

    check_dataset(dataset)
    objects = walk(dataset)
    graph = gp.new_pipeline_graph(name, graphaudit_version=__version__, mindspore_version=ms.__version__)
    pipeline = Pipeline(name, graph, dataset)
    node_of: dict[int, str] = {}
    with kept_caches(objects):
        serialised, whole = _serialised(dataset)
        graph.graph["serialised"] = whole
        for order, obj in enumerate(objects):
            tree = serialised.get(id(obj))
            kind = gp.OPERATION if obj.children else gp.SOURCE
            op = ops.op_name(type(obj).__name__) if obj.children else type(obj).__name__
            params = {k: v for k, v in (tree or {}).items() if k not in _NOT_PARAMS}
            columns, rows = _asked(obj, ops.size_is_cheap(obj))
            node = gp.add_step(
                graph,
                kind,
                op,
                order=order,
                op_type=str((tree or {}).get("op_type", "")),
                class_name=type(obj).__name__,
                columns=columns,
                rows=rows,
                params=gp.json_attr(ops.json_safe(params)),
                **_step_attrs(obj),
            )
            node_of[id(obj)] = node
            pipeline.objects[node] = obj
            for index, child in enumerate(obj.children):
                gp.add_feed(graph, node_of[id(child)], node, index)
            if type(obj).__name__ == "MapDataset":
                _add_transforms(graph, node, obj, tree)
    return pipeline


def _add_transforms(graph: nx.MultiDiGraph, node: str, obj: Any, tree: dict[str, Any] | None) -> None:
    python = list(getattr(obj, "operations", None) or [])
    listed = tree.get("operations") if tree is not None else None
    readable = isinstance(listed, list) and all(isinstance(op, dict) for op in listed)
    if readable or (isinstance(listed, list) and not python):
        found = list(_json_transforms(listed, python))
    else:  # not serialised, or serialised as None (python_multiprocessing=True): the objects say
        found = list(_python_transforms(python))
    columns = graph.nodes[node].get("input_columns", "[]")
    for index, item in enumerate(found):
        gp.add_transform(
            graph,
            node,
            item["name"],
            index,
            op_type=item["op_type"],
            params=gp.json_attr(ops.json_safe(item["params"])),
            random=ops.is_random(item["name"]),
            python=bool(item["python"]),
            columns=columns,
            **({"unreadable": True} if item.get("unreadable") else {}),
        )


def pipeline_graph(dataset: Any, name: str = "dataset") -> nx.MultiDiGraph:
    """The graph of the pipeline ending at *dataset* (see :mod:`graphaudit.graph.pipeline`)."""
    return capture_pipeline(dataset, name).graph
