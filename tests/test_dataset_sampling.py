"""Sampling a pipeline: bounded, from a fresh iterator, never advancing the user's iterators or epochs."""

from __future__ import annotations

import random
import time

import mindspore.dataset as ds
import numpy as np
import pytest
from dataset_files import image_folder
from mindspore import nn

import graphaudit
from graphaudit.capture.data import sampling as dataset_sample
from graphaudit.capture.data.pipeline import capture_pipeline
from graphaudit.capture.data.sampling import SamplingError, sample_pipeline


def numbered(rows: int = 100, shuffle: bool = False) -> ds.Dataset:
    return ds.NumpySlicesDataset(
        {"x": np.arange(rows, dtype=np.float32), "label": np.arange(rows) % 2}, shuffle=shuffle
    )


def test_sampling_never_advances_the_users_iterator_nor_its_epochs():
    data = numbered().batch(10)
    mine = data.create_tuple_iterator(num_epochs=2, output_numpy=True)
    first = next(mine)[0]
    graphaudit.audit(nn.Dense(1, 2), dataset=data, dataset_batches=3)
    assert first.tolist() == list(range(10))
    assert next(mine)[0].tolist() == list(range(10, 20))  # the user's second batch, as if nothing happened
    rest_of_epoch = [float(b[0][0]) for b in mine]
    assert rest_of_epoch == [20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0]
    assert [float(b[0][0]) for b in mine] == [float(i) for i in range(0, 100, 10)]  # epoch 2, whole


def test_the_users_shuffled_order_is_the_same_with_or_without_an_audit():
    def orders(audit_first: bool) -> list[list[float]]:
        ds.config.set_seed(7)
        data = numbered(shuffle=True).shuffle(10).batch(10)
        if audit_first:
            graphaudit.audit_dataset(data, batches=2)
        return [b[0].tolist() for b in data.create_tuple_iterator(num_epochs=2, output_numpy=True)]

    seed = ds.config.get_seed()
    try:
        assert orders(audit_first=True) == orders(audit_first=False)
    finally:
        ds.config.set_seed(seed)


def test_the_global_random_states_are_put_back():
    def noisy(x):
        return x + np.random.random()  # a Python transform drawing from NumPy's global generator

    data = numbered().map(noisy, "x").batch(10)
    np.random.seed(3)
    random.seed(3)
    expected = (np.random.random(), random.random())
    np.random.seed(3)
    random.seed(3)
    sample_pipeline(capture_pipeline(data, "train"), 4)
    assert (np.random.random(), random.random()) == expected


def test_a_generator_object_is_sampled_without_being_consumed():
    def gen():
        for i in range(20):
            yield np.float32(i), np.int32(i % 2)

    data = ds.GeneratorDataset(gen(), ["x", "label"], shuffle=False).batch(5)
    sample = sample_pipeline(capture_pipeline(data, "train"), 2)
    assert sample.column("x").tolist() == list(range(10))
    assert [float(b[0][0]) for b in data.create_tuple_iterator(num_epochs=1, output_numpy=True)] == [
        0,
        5,
        10,
        15,
    ]


def test_a_one_shot_iterator_is_not_sampled_and_the_checks_say_why():
    class OneShot:
        def __init__(self) -> None:
            self.i = 0

        def __iter__(self):
            return self

        def __next__(self):
            if self.i >= 8:
                raise StopIteration
            self.i += 1
            return np.float32(self.i), np.int32(self.i % 2)

    source = OneShot()
    data = ds.GeneratorDataset(source, ["x", "label"], shuffle=False).batch(4)
    report = graphaudit.audit_dataset(data)
    assert source.i == 0
    assert "one-shot Python iterator" in report.skipped["GA003"]


def test_sampling_is_bounded_and_a_large_shuffle_buffer_is_capped_in_a_copy():
    data = numbered(5000).shuffle(5000).batch(10)
    sample = sample_pipeline(capture_pipeline(data, "train"), 3)
    assert (sample.batches, sample.rows, sample.complete) == (3, 30, False)
    assert sample.capped == ["train/shuffle#1"]
    assert data.children[0].buffer_size == 5000  # the user's pipeline keeps its buffer
    whole = sample_pipeline(capture_pipeline(numbered(25).batch(10), "train"), 8)
    assert (whole.batches, whole.rows, whole.complete) == (3, 25, True)
    assert whole.describe() == "all 3 batches (25 rows) of one epoch"


def test_an_unbatched_pipeline_is_sampled_by_rows():
    sample = sample_pipeline(capture_pipeline(numbered(200), "train"), 2)
    assert not sample.batched and sample.rows == 2 * dataset_sample.ROWS_PER_UNBATCHED
    assert sample.column("x").shape == (64,)


def test_sampling_stops_at_the_memory_bound():
    data = ds.NumpySlicesDataset({"x": np.zeros((64, 256), np.float32)}, shuffle=False).batch(8)
    sample = sample_pipeline(capture_pipeline(data, "train"), 8, max_bytes=10_000)
    assert sample.batches == 2 and "stopped at" in sample.stopped


def test_progress_is_shown_when_sampling_takes_over_a_second(monkeypatch, capsys):
    def slow():
        for i in range(6):
            time.sleep(0.15)
            yield (np.float32(i),)

    monkeypatch.setattr(dataset_sample, "PROGRESS_AFTER", 0.2)
    data = ds.GeneratorDataset(slow, ["x"], shuffle=False).batch(2)
    sample_pipeline(capture_pipeline(data, "train"), 3, label="the training data")
    err = capsys.readouterr().err
    assert (
        "graphaudit: sampling the training data:" in err and "graphaudit: done the training data: 3/3" in err
    )
    sample_pipeline(capture_pipeline(data, "train"), 3, progress=False)
    assert capsys.readouterr().err == ""


def test_a_pipeline_that_fails_is_reported_as_the_reason_checks_did_not_run(tmp_path):
    folder = image_folder(tmp_path)
    (tmp_path / "class0" / "notes.txt").write_text("not an image")
    import mindspore.dataset.vision as vision

    data = ds.ImageFolderDataset(folder, shuffle=False).map(vision.Decode(), "image").batch(32)
    report = graphaudit.audit_dataset(data)
    assert "the pipeline failed while graphaudit read batch 1" in report.skipped["GA003"]
    with pytest.raises(SamplingError):
        sample_pipeline(capture_pipeline(data, "train"), 1)


def _endless(rows_passed_every: int | None) -> ds.Dataset:
    def rows():
        i = 0
        while True:
            yield np.array([i], np.float32), np.array(i % 2, np.int32)
            i += 1

    def keep(x):
        return rows_passed_every is not None and int(x[0]) % rows_passed_every == 0

    return ds.GeneratorDataset(rows, ["x", "label"], shuffle=False).filter(keep, input_columns=["x"]).batch(2)


def test_an_endless_source_behind_a_filter_passing_nothing_stops_at_the_time_bound():
    data = _endless(None)
    predicate = data.children[0].predicate
    with pytest.raises(  # the time bound stopped it (before, it never returned): no timing asserted
        SamplingError, match=r"stopped after \d+\.\d s \(dataset_seconds=1\) without a single batch"
    ):
        sample_pipeline(capture_pipeline(data, "train"), 4, seconds=1.0, progress=False)
    assert data.children[0].predicate is predicate  # the user's filter is left as it was
    report = graphaudit.audit_dataset(data, seconds=1.0)
    assert "without a single batch coming out of the pipeline" in report.skipped["GA012"]


def test_the_rows_a_filter_reads_are_bounded_and_what_was_sampled_is_kept():
    sample = sample_pipeline(capture_pipeline(_endless(1000), "train"), 8, max_rows=5000, progress=False)
    assert sample.batches == 2 and not sample.complete  # rows 0..3000 passed, 4 rows
    assert sample.stopped == "stopped after its filters read 5001 rows (dataset_max_rows=5000)"
    assert "dataset_max_rows=5000" in sample.describe()


@pytest.mark.parametrize(
    ("keyword", "value"), [("dataset_seconds", 0), ("dataset_seconds", "soon"), ("dataset_max_rows", 0)]
)
def test_sampling_bounds_are_checked(keyword, value):
    with pytest.raises(graphaudit.GraphAuditError, match=keyword):
        graphaudit.audit(nn.Dense(1, 2), dataset=numbered().batch(10), **{keyword: value})
