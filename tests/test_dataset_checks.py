"""The data checks (GA0xx) on real pipelines: silent on correct ones, each threshold where it is documented."""

from __future__ import annotations

import json
from pathlib import Path

import mindspore as ms
import mindspore.dataset as ds
import mindspore.dataset.transforms as transforms
import mindspore.dataset.vision as vision
import numpy as np
import pytest
from dataset_files import csv_file, image_folder
from mindspore import Tensor, nn

import graphaudit
from graphaudit.errors import ArgumentError, ArgumentTypeError

MEAN, STD = [0.5, 0.5, 0.5], [0.25, 0.25, 0.25]
SCHEMA = Path(__file__).resolve().parent.parent / "graphaudit" / "report" / "schema" / "report.schema.json"
PIPELINE_CHECKS = {
    f"GA0{i:02d}" for i in range(1, 16)
}  # the data-pipeline checks (GA05x judge audit()'s inputs)


def data_findings(report: graphaudit.Report, *severities: str) -> list[tuple[str, str, str]]:
    wanted = severities or ("error", "warning")
    return [
        (f.check_id, f.severity, f.subject)
        for f in report.findings
        if f.check_id in PIPELINE_CHECKS and f.severity in wanted
    ]


def pair(
    tmp_path: Path, *, train_extra=(), eval_finish=None, classes: int = 3
) -> tuple[ds.Dataset, ds.Dataset]:
    """A correct train/eval pair: augmentation in training only, the same scaling in both."""
    finish = [vision.Rescale(1 / 255, 0), vision.Normalize(MEAN, STD), vision.HWC2CHW()]
    augment = [vision.Decode(), vision.RandomResizedCrop(16), vision.RandomHorizontalFlip(), *train_extra]
    train = ds.ImageFolderDataset(image_folder(tmp_path / "train", classes, 8, 20)).map(
        augment + finish, "image"
    )
    evaluate = [vision.Decode(), vision.Resize(18), vision.CenterCrop(16)]
    eval_ds = ds.ImageFolderDataset(image_folder(tmp_path / "val", classes, 4, 20), shuffle=False)
    eval_ds = eval_ds.map(evaluate + (finish if eval_finish is None else eval_finish), "image")
    return train.batch(4, drop_remainder=True), eval_ds.batch(4)


class Classifier(nn.Cell):
    def __init__(self, classes: int) -> None:
        super().__init__()
        self.body = nn.SequentialCell([nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten()])
        self.head = nn.Dense(4 * 16 * 16, classes)

    def construct(self, x):
        return self.head(self.body(x))


def test_a_correct_pair_with_augmentation_in_training_only_is_silent(tmp_path):
    train, eval_ds = pair(tmp_path)
    net = Classifier(3)
    x = Tensor(np.zeros((4, 3, 16, 16), np.float32))
    report = graphaudit.audit(
        net,
        nn.Momentum(net.trainable_params(), 0.01, 0.9),
        inputs=(x,),
        loss_fn=nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
        dataset=train,
        eval_dataset=eval_ds,
    )
    assert set(report.checks_run) >= PIPELINE_CHECKS, report.skipped
    assert data_findings(report) == [], str(report)
    assert [f.check_id for f in report.findings if f.check_id in PIPELINE_CHECKS] == [
        "GA009"
    ]  # info: few rows per class


def test_an_imbalanced_on_purpose_set_declared_as_such_is_silent(tmp_path):
    labels = [0] * 300 + [1] * 12
    path = csv_file(tmp_path, labels)
    train = ds.CSVDataset(path, column_defaults=[0.0, 0.0, 0], column_names=["a", "b", "label"]).batch(8)
    assert [c for c, *_ in data_findings(graphaudit.audit_dataset(train))] == ["GA008"]
    assert data_findings(graphaudit.audit_dataset(train, imbalanced=True)) == []
    weights = [1 / labels.count(label) for label in labels]
    x = np.random.default_rng(0).standard_normal((len(labels), 2)).astype(np.float32)
    held = {"x": x, "label": np.array(labels, np.int32)}
    rebalanced = ds.NumpySlicesDataset(held, sampler=ds.WeightedRandomSampler(weights, len(weights)))
    assert data_findings(graphaudit.audit_dataset(rebalanced.batch(8))) == []


def test_class_counts_say_whether_they_cover_the_whole_column_or_a_sample():
    def rows():
        for i in range(400):
            yield np.float32(i % 7), np.int32(0 if i % 20 else 1)

    sampled = ds.GeneratorDataset(rows, ["x", "label"]).batch(10)
    report = graphaudit.audit_dataset(sampled, batches=8)
    imbalance = report.by_check("GA008")
    assert (
        imbalance
        and imbalance[0].severity == "info"
        and "counted on the sample (the first 8 batches" in imbalance[0].message
    )
    held = ds.NumpySlicesDataset(
        {"x": np.zeros(400), "label": [0 if i % 20 else 1 for i in range(400)]}
    ).batch(10)
    whole = graphaudit.audit_dataset(held).by_check("GA008")
    assert whole[0].severity == "warning" and "whole label column (400 rows held" in whole[0].message


def test_structure_only_reads_no_batch_and_says_which_checks_need_one(tmp_path):
    train, eval_ds = pair(tmp_path, eval_finish=[vision.HWC2CHW()])
    report = graphaudit.audit_dataset(train, eval_ds, batches=0)
    assert "sampling is turned off (dataset_batches=0)" in report.skipped["GA003"]
    assert {"GA001", "GA002", "GA004", "GA005", "GA008", "GA009"} <= set(report.checks_run)
    assert [c for c, *_ in data_findings(report)] == ["GA004"]  # found from the structure alone
    assert "GA010" in report.skipped and "audit the data with the network" in report.skipped["GA010"]


def test_equal_scaling_written_two_ways_is_not_a_mismatch(tmp_path):
    train, _ = pair(tmp_path)
    same = [vision.Normalize([m * 255 for m in MEAN], [s * 255 for s in STD]), vision.HWC2CHW()]
    _, eval_ds = pair(tmp_path / "b", eval_finish=same)
    assert data_findings(graphaudit.audit_dataset(train, eval_ds)) == []


@pytest.mark.parametrize(
    ("finish", "words"),
    [
        (
            [vision.Rescale(1 / 255, 0), vision.Normalize(MEAN, STD)],
            "channel order is CHW in training and HWC",
        ),
        (
            [
                vision.Rescale(1 / 255, 0),
                vision.Normalize(MEAN, STD),
                vision.HWC2CHW(),
                vision.Resize((12, 12)),
            ],
            "16x16 images in training and 12x12 in evaluation",
        ),
        (
            [
                vision.Rescale(1 / 255, 0),
                vision.Normalize(MEAN, STD),
                vision.HWC2CHW(),
                transforms.TypeCast(ms.float16),
            ],
            "float16 in evaluation",
        ),
    ],
)
def test_each_preparation_difference_is_an_error(tmp_path, finish, words):
    train, eval_ds = pair(tmp_path, eval_finish=finish)
    found = graphaudit.audit_dataset(train, eval_ds).by_check("GA004")
    assert found and found[0].severity == "error" and words in found[0].message, [f.message for f in found]


def test_unshuffled_rows_are_a_warning_unless_the_batches_show_single_classes():
    mixed = ds.NumpySlicesDataset({"x": np.zeros(64), "label": np.arange(64) % 2}, shuffle=False).batch(8)
    assert [f.severity for f in graphaudit.audit_dataset(mixed).by_check("GA001")] == ["warning"]
    stored = ds.NumpySlicesDataset({"x": np.zeros(64), "label": np.arange(64) // 32}, shuffle=False).batch(8)
    assert [f.severity for f in graphaudit.audit_dataset(stored).by_check("GA001")] == ["error"]
    after = (
        ds.NumpySlicesDataset({"x": np.zeros(64), "label": np.arange(64) % 2}, shuffle=False)
        .batch(8)
        .shuffle(8)
    )
    assert "reorders whole batches" in graphaudit.audit_dataset(after).by_check("GA001")[0].message
    files = ds.CSVDataset(
        csv_file(Path(__import__("tempfile").mkdtemp()), [0, 1] * 8), shuffle=ds.Shuffle.FILES
    )
    assert "Shuffle.FILES" in graphaudit.audit_dataset(files.batch(4)).by_check("GA001")[0].message


def test_most_sampled_batches_of_one_class_are_an_error_and_chance_ones_are_not():
    # 4 classes of 12 rows stored by class, batches of 8: 4 of the 6 batches hold a single class
    stored = ds.NumpySlicesDataset({"x": np.zeros(48), "label": np.arange(48) // 12}, shuffle=False).batch(8)
    (found,) = graphaudit.audit_dataset(stored).by_check("GA001")
    assert found.severity == "error" and "4 of the first 6 batches each hold a single class" in found.message
    rng = np.random.default_rng(0)
    # 95% of one class in a random order: most batches of 8 hold that class alone by chance
    skewed = (rng.random(64) < 0.05).astype(np.int32)
    # two balanced classes in batches of 2: half of them hold one class by chance
    pairs = rng.integers(0, 2, 16).astype(np.int32)
    for labels, size in ((skewed, 8), (pairs, 2)):
        data = ds.NumpySlicesDataset({"x": np.zeros(len(labels)), "label": labels}, shuffle=False).batch(size)
        assert [f.severity for f in graphaudit.audit_dataset(data).by_check("GA001")] == ["warning"]


def test_a_preparation_step_missing_in_evaluation_is_reported_where_it_goes(tmp_path):
    train, eval_ds = pair(tmp_path, eval_finish=[vision.HWC2CHW()])  # no Rescale / Normalize
    (found,) = graphaudit.audit_dataset(train, eval_ds).by_check("GA004")
    assert "scaled differently" in found.message
    assert found.subject == "eval/map#1", found.subjects  # not training's correct Rescale
    assert "train/map#1/Rescale" in found.subjects


def test_a_small_buffer_is_enough_when_the_source_shuffles():
    data = (
        ds.NumpySlicesDataset({"x": np.zeros(400), "label": np.arange(400) % 4}, shuffle=True)
        .shuffle(8)
        .batch(16)
    )
    report = graphaudit.audit_dataset(data)
    assert "GA002" in report.checks_run and not report.by_check("GA002")


def test_a_last_batch_of_one_is_info_for_a_batchnorm_over_images_and_an_error_over_features():
    images = ds.NumpySlicesDataset(
        {
            "x": np.random.default_rng(0).standard_normal((9, 3, 16, 16)).astype(np.float32),
            "label": np.arange(9) % 3,
        }
    ).batch(4)
    net = Classifier(3)
    x = Tensor(np.zeros((4, 3, 16, 16), np.float32))
    found = graphaudit.audit(net, nn.SGD(net.trainable_params()), inputs=(x,), dataset=images).by_check(
        "GA015"
    )
    assert [(f.severity, f.subject) for f in found] == [("info", "train/batch#1")]
    features = ds.NumpySlicesDataset({"x": np.zeros((9, 8), np.float32), "label": np.arange(9) % 2}).batch(4)
    dense = nn.SequentialCell([nn.Dense(8, 8), nn.BatchNorm1d(8), nn.Dense(8, 2)])
    found = graphaudit.audit(dense, nn.SGD(dense.trainable_params()), dataset=features).by_check("GA015")
    assert [f.severity for f in found] == ["error"] and found[0].nodes == ("cell:1",)
    evaluated = graphaudit.audit(dense, mode="eval", dataset=features)
    assert not evaluated.by_check("GA015")


def test_labels_broadcast_against_a_one_unit_output_for_a_regression_loss():
    rng = np.random.default_rng(0)
    data = ds.NumpySlicesDataset(
        {
            "x": rng.standard_normal((32, 4)).astype(np.float32),
            "y": rng.standard_normal(32).astype(np.float32),
        }
    ).batch(8)
    net = nn.Dense(4, 1)
    x = Tensor(np.zeros((8, 4), np.float32))
    report = graphaudit.audit(net, inputs=(x,), loss_fn=nn.MSELoss(), dataset=data)
    found = report.by_check("GA007")
    assert (
        found
        and "broadcasts them to [8, 8]" in found[0].message
        and found[0].subjects == ("train:y", "MSELoss")
    )
    assert found[0].nodes == ("output:0",)
    assert "GA006" in report.skipped  # a regression output's width is no class count


def test_one_hot_labels_of_another_width_than_num_classes():
    data = (
        ds.NumpySlicesDataset({"x": np.zeros((12, 2), np.float32), "label": np.arange(12) % 4})
        .map(transforms.OneHot(4), "label")
        .batch(4)
    )
    found = graphaudit.audit_dataset(data, num_classes=3).by_check("GA006")
    assert found and "one-hot rows of width 4" in found[0].message
    assert not graphaudit.audit_dataset(data, num_classes=4).by_check("GA006")


def test_a_declared_missing_marker_is_a_warning():
    data = ds.NumpySlicesDataset(
        {"x": np.array([1.0, -1.0, 2.0, 3.0] * 4, np.float32), "label": np.arange(16) % 2}
    )
    found = graphaudit.audit_dataset(data.batch(4), missing_value=-1).by_check("GA011")
    assert [(f.severity, f.subject) for f in found] == [("warning", "train:x")] and "4 times" in found[
        0
    ].message
    assert not graphaudit.audit_dataset(data.batch(4)).by_check("GA011")


def test_a_constant_channel_is_found_when_the_whole_epoch_was_sampled():
    rng = np.random.default_rng(0)
    rgba = rng.random((16, 4, 8, 8)).astype(np.float32)
    rgba[:, 3] = 1.0  # an alpha channel that never changes
    data = ds.NumpySlicesDataset({"image": rgba, "label": np.arange(16) % 2}).batch(4)
    found = graphaudit.audit_dataset(data).by_check("GA012")
    assert found and "1 of 4 channels" in found[0].message and found[0].message.endswith(": 3.")
    assert found[0].cause.channels == (3,)


def test_short_tabular_rows_that_repeat_are_not_label_errors():
    data = ds.NumpySlicesDataset({"x": np.array([[0.0, 1.0]] * 16, np.float32), "label": np.arange(16) % 2})
    assert not graphaudit.audit_dataset(data.batch(4)).by_check("GA014")


def test_the_label_column_can_be_named():
    data = ds.NumpySlicesDataset({"x": np.zeros((8, 2), np.float32), "cls": np.arange(8) % 5}).batch(4)
    assert (
        "GA006" not in graphaudit.audit_dataset(data, num_classes=3).checks_run
    )  # no column called like a label
    found = graphaudit.audit_dataset(data, num_classes=3, label_column="cls").by_check("GA006")
    assert found and found[0].subject == "train:cls"


def test_bad_arguments_say_what_to_pass():
    data = ds.NumpySlicesDataset({"x": np.zeros(4), "label": np.zeros(4)}).batch(2)
    with pytest.raises(ArgumentError, match="dataset_batches= takes a whole number >= 0"):
        graphaudit.audit(nn.Dense(1, 1), dataset=data, dataset_batches="many")
    with pytest.raises(ArgumentError, match="num_classes= takes a whole number >= 1"):
        graphaudit.audit_dataset(data, num_classes=0)
    with pytest.raises(ArgumentError, match="label_column='target' is not a column"):
        graphaudit.audit_dataset(data, label_column="target")
    with pytest.raises(ArgumentTypeError, match=r"expects a mindspore\.dataset pipeline"):
        graphaudit.audit_dataset([1, 2, 3])
    with pytest.raises(TypeError, match="did you mean 'dataset'"):
        graphaudit.audit(nn.Dense(1, 1), datset=data)


def test_the_report_carries_the_pipeline_graphs_annotated_and_its_json_is_valid(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    train, eval_ds = pair(tmp_path, eval_finish=[vision.HWC2CHW()])
    report = graphaudit.audit_dataset(train, eval_ds)
    assert sorted(report.datasets) == ["eval", "train"] and report.graph.number_of_nodes() == 0
    flagged = {n: d["findings"] for n, d in report.annotated("eval").nodes(data=True) if "findings" in d}
    assert not any("findings" in d for _, d in report.datasets["eval"].nodes(data=True))
    assert "GA004" in json.dumps(flagged)
    data = json.loads(report.to_json())
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text())).validate(data)
    assert {n["id"] for n in data["datasets"]["train"]["nodes"]} == set(report.datasets["train"].nodes)
    assert "datasets" not in graphaudit.audit(nn.Dense(2, 2)).to_dict()  # a network's report keeps its keys
    assert report.render(tmp_path / "empty.dot").exists()  # the (empty) network graph still draws
