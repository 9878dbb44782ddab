"""MindSpore reads what the dataset tests' writers (tests/dataset_files.py) write.

The writers (image folders, MindRecord and CSV files, in a temporary folder) are imported by
the other ``tests/test_dataset_*.py`` modules from tests/dataset_files.py. Nothing is downloaded.
"""

from __future__ import annotations

from dataset_files import csv_file, image_folder, mindrecord


def test_mindspore_reads_what_the_writers_write(tmp_path):
    import mindspore.dataset as ds

    folder = image_folder(tmp_path / "images", classes=3, per_class=2, ext="jpg")
    assert ds.ImageFolderDataset(folder).get_dataset_size() == 6
    assert ds.MindDataset(mindrecord(tmp_path, rows=10)).get_dataset_size() == 10
    csv = ds.CSVDataset(
        csv_file(tmp_path, [0, 1, 1]), column_defaults=[0.0, 0.0, 0], column_names=["a", "b", "label"]
    )
    assert csv.get_dataset_size() == 3
