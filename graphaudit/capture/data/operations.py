"""What the pipeline capture knows about MindSpore's dataset operations, transforms and samplers.

Names are MindSpore 2.x's: the op classes of ``mindspore.dataset`` (``MapDataset``...), the
``tensor_op_name`` each transform has in the pipeline's JSON serialisation (``to_json()``;
``HWC2CHW`` is written ``HwcToChw`` there), the samplers and the ``shuffle_flag`` of the
file-based sources. Nothing here runs a pipeline.

Example:
    >>> op_name("MapDataset"), op_name("BucketBatchByLengthDataset")
    ('map', 'bucket_batch_by_length')
    >>> is_random("RandomResizedCrop"), is_random("CutOut"), is_random("Resize")
    (True, True, False)
    >>> canonical_transform("HwcToChw")
    'HWC2CHW'
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

__all__ = [
    "CONTAINERS",
    "canonical_transform",
    "is_random",
    "json_safe",
    "op_name",
    "python_params",
    "sampler_shuffle",
    "size_is_cheap",
    "source_location",
    "source_shuffle",
]

#: Transforms that draw from a random generator although their name does not start with "Random".
RANDOM_TRANSFORMS = frozenset(
    {
        "AutoAugment",
        "RandAugment",
        "TrivialAugmentWide",
        "UniformAugment",
        "CutOut",
        "CutMixBatch",
        "MixUp",
        "MixUpBatch",
        "BoundingBoxAugment",
        "SoftDvppDecodeRandomCropResizeJpeg",
    }
)
#: Transforms that hold other transforms: a Compose runs them in order, the others pick at random.
CONTAINERS = frozenset({"Compose", "RandomApply", "RandomChoice", "RandomOrder", "UniformAugment"})
#: ``tensor_op_name`` in MindSpore's JSON -> the class a user writes.
_JSON_NAMES = {"HwcToChw": "HWC2CHW", "ToType": "TypeCast"}
#: ``shuffle_flag`` of the file-based sources (CSV, TFRecord, MindRecord...), from mindspore.dataset.
_SHUFFLE_FLAGS = {0: "none", 1: "files", 2: "global", 3: "infile", 4: "partial", 5: "adaptive"}
#: Size of the files a CSV/TFRecord/text source may read to count its rows (MindSpore reads them all).
CHEAP_FILE_BYTES = 64 * 1024 * 1024


def op_name(class_name: str) -> str:
    """The snake-case name of a dataset operation class (``ShuffleDataset`` -> ``shuffle``)."""
    base = class_name[: -len("Dataset")] if class_name.endswith("Dataset") else class_name
    return re.sub(r"(?<!^)(?=[A-Z])", "_", base).lower()


def canonical_transform(name: str) -> str:
    """The class name of a transform from its ``tensor_op_name`` in MindSpore's JSON."""
    return _JSON_NAMES.get(name, name)


def is_random(name: str) -> bool:
    """Whether the transform called *name* is a random augmentation (its output varies per call)."""
    return name.startswith("Random") or name in RANDOM_TRANSFORMS


def json_safe(value: Any) -> Any:
    """*value* with everything JSON cannot hold turned into text (enums, dtypes, arrays, objects)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and getattr(value, "size", 1_000_000) <= 64:
        return json_safe(tolist())
    return str(getattr(value, "name", None) or type(value).__name__)


def python_params(transform: Any) -> dict[str, Any]:
    """The parameters of a transform object read from its attributes (when MindSpore could not serialise it)."""
    found: dict[str, Any] = {}
    for key, value in vars(transform).items() if hasattr(transform, "__dict__") else ():
        if key.startswith("_") or key in ("implementation", "callable_op_", "transforms", "random"):
            continue
        if isinstance(value, (str, int, float, bool, list, tuple)) or hasattr(value, "tolist"):
            found[key] = json_safe(value)
    return found


def sampler_shuffle(sampler: Any) -> str:
    """How a sampler orders the rows: ``"global"``, ``"none"``, or a MindRecord shuffle mode."""
    name = type(sampler).__name__
    if name == "SequentialSampler" or name == "SubsetSampler":
        return "none"
    if name in ("DistributedSampler", "PKSampler"):
        return "global" if getattr(sampler, "shuffle", False) else "none"
    if name == "RandomSampler":
        mode = getattr(sampler, "shuffle", None)
        value = getattr(mode, "value", mode)
        return value if value in ("files", "infile", "partial", "adaptive") else "global"
    if name in ("SubsetRandomSampler", "WeightedRandomSampler"):
        return "global"
    return "sampler"  # a user-written sampler: its order is the user's


def source_shuffle(source: Any) -> tuple[str, str]:
    """``(shuffle mode, sampler class)`` of a source dataset object."""
    sampler = getattr(source, "sampler", None)
    if sampler is not None:
        return sampler_shuffle(sampler), type(sampler).__name__
    flag = getattr(source, "shuffle_flag", None)
    return _SHUFFLE_FLAGS.get(flag, "none" if flag is None else str(flag)), ""


def source_location(source: Any) -> str:
    """The folder or files a source reads, ``""`` for data held in memory."""
    for attr in ("dataset_dir", "dataset_files", "dataset_file"):
        value = getattr(source, attr, None)
        if value:
            return value if isinstance(value, str) else json.dumps([str(v) for v in value])
    return ""


def _file_bytes(source: Any) -> int:
    files = getattr(source, "dataset_files", None) or []
    files = [files] if isinstance(files, str) else files
    try:
        return sum(os.path.getsize(f) for f in files)
    except OSError:
        return CHEAP_FILE_BYTES + 1


def size_is_cheap(node: Any) -> bool:
    """Whether MindSpore can count the rows of *node* without running it.

    Not when a filter, a generator without ``__len__``, a batch-size function or a bucket
    batch is upstream (``get_dataset_size()`` would iterate the whole pipeline), nor when a
    file-based source has more than 64 MiB of files to read.
    """
    stack, seen = [node], set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        name = type(current).__name__
        if name in ("FilterDataset", "BucketBatchByLengthDataset"):
            return False
        if name == "GeneratorDataset" and getattr(current, "source_len", -1) < 0:
            return False
        if getattr(current, "batch_size_func", None) is not None:
            return False
        if (
            name in ("CSVDataset", "TFRecordDataset", "TextFileDataset")
            and _file_bytes(current) > CHEAP_FILE_BYTES
        ):
            return False
        stack.extend(current.children)
    return True
