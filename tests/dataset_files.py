"""Real data the dataset tests write to a temporary folder: image folders, MindRecord and CSV files.

The ``tests/test_dataset_*.py`` modules import the writers from here (``from dataset_files
import image_folder``, as they import ``nets.py``); tests/test_dataset_fixtures.py checks that
MindSpore reads what they write. Nothing is downloaded.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from PIL import Image


def image_folder(root: Path, classes: int = 2, per_class: int = 8, size: int = 8, ext: str = "png") -> str:
    """*classes* class folders of *per_class* random images (PNG or JPEG) under *root*."""
    rng = np.random.default_rng(0)
    for c in range(classes):
        folder = root / f"class{c}"
        folder.mkdir(parents=True)
        for i in range(per_class):
            pixels = rng.integers(0, 256, (size, size, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(folder / f"{i}.{ext}")
    return str(root)


def mindrecord(root: Path, rows: int = 24, classes: int = 3) -> str:
    """A MindRecord file of ``features`` (float32 x 6) and ``label`` (int32), written with FileWriter."""
    from mindspore.mindrecord import FileWriter

    path = os.path.join(root, "data.mindrecord")
    writer = FileWriter(path, shard_num=1, overwrite=True)
    writer.add_schema({"features": {"type": "float32", "shape": [6]}, "label": {"type": "int32"}}, "data")
    rng = np.random.default_rng(0)
    writer.write_raw_data(
        [{"features": rng.standard_normal(6).astype(np.float32), "label": i % classes} for i in range(rows)]
    )
    writer.commit()
    return path


def csv_file(root: Path, labels: list[int]) -> str:
    """A headerless CSV of two float columns and the given labels."""
    path = os.path.join(root, "data.csv")
    rng = np.random.default_rng(0)
    with open(path, "w") as out:
        for label in labels:
            a, b = rng.standard_normal(2)
            out.write(f"{a:.4f},{b:.4f},{label}\n")
    return path
