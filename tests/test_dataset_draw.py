"""graphaudit.draw.pipeline: a pipeline graph and its findings as Graphviz DOT and SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import mindspore.dataset as ds
import mindspore.dataset.vision as vision
import numpy as np
import pytest
from dataset_files import image_folder

import graphaudit
from graphaudit.draw.pipeline import pipeline_dot, pipeline_svg, pipeline_targets
from graphaudit.draw.style import SEVERITY_COLORS, svg_id


def audited(tmp_path):
    train = ds.ImageFolderDataset(image_folder(tmp_path / "t"), shuffle=False)
    train = train.map([vision.Decode(), vision.RandomHorizontalFlip(), vision.HWC2CHW()], "image").batch(4)
    evaluate = ds.ImageFolderDataset(image_folder(tmp_path / "e"), shuffle=False)
    evaluate = evaluate.map([vision.Decode(), vision.RandomCrop(6), vision.HWC2CHW()], "image").batch(4)
    return graphaudit.audit_dataset(train, evaluate, batches=2)


def test_findings_are_marked_on_the_steps_and_transforms_they_name(tmp_path):
    report = audited(tmp_path)
    graph = report.datasets["eval"]
    dot = pipeline_dot(graph, report.findings).source
    crop = svg_id("ds:eval/map#1/RandomCrop")
    line = next(text for text in dot.splitlines() if f'id="{crop}"' in text)
    assert "[GA005]" in line and SEVERITY_COLORS["warning"] in line and "dashed" in line
    targets = dict(zip((f.check_id for f in report.findings), pipeline_targets(graph, report.findings)))
    assert targets["GA005"] == [crop]
    train_dot = pipeline_dot(report.datasets["train"], report.findings).source
    assert "[GA001]" in train_dot and "shuffle: none (SequentialSampler)" in train_dot
    assert "cluster_" + svg_id("ds:train/map#1") in train_dot  # a map is a box around its transforms


def test_user_text_cannot_break_the_dot(tmp_path):
    def weird(x):
        return x

    weird.__name__ = 'say "hi" <b>\\N'
    data = ds.NumpySlicesDataset({"x": np.zeros((4, 2), np.float32)}, shuffle=False).map(weird, "x").batch(2)
    graph = graphaudit.to_networkx(data)
    dot = pipeline_dot(graph)
    assert dot.source.count("digraph") == 1


@pytest.mark.needs_dot
def test_the_svg_has_one_element_per_step_with_its_classes(tmp_path):
    report = audited(tmp_path)
    svg = pipeline_svg(report.datasets["train"], report.findings)
    root = ET.fromstring(svg)
    ids = {el.get("id"): el.get("class", "") for el in root.iter() if el.get("id", "").startswith("ga-ds")}
    source = svg_id("ds:train/ImageFolderDataset#1")
    assert source in ids and "ga-flagged" in ids[source] and "ga-sev-" in ids[source]
    assert svg_id("ds:train/batch#1") in ids
