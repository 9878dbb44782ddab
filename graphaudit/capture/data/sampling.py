"""A bounded sample of the batches a pipeline produces, from a fresh iterator on a copy of it.

What the data checks measure (value ranges, labels, duplicates) is read from a few batches.
They are drawn from a fresh iterator of graphaudit's own (MindSpore builds every iterator on
its own deep copy of the pipeline): the user's iterators and their epoch counters are never
touched, so the next batch the user's iterator yields is the one it would have yielded anyway
(a test proves it), and the caches MindSpore writes on the dataset objects are put back. A
``shuffle`` buffer larger than :data:`SHUFFLE_CAP` rows is capped, in a deep copy of the
pipeline: a ``shuffle(10_000)`` would otherwise read and decode 10,000 rows before the first
batch, and the statistics measured do not depend on the order. The global random states of
NumPy and Python, which Python transforms may draw from, are put back afterwards.

Sampling stops after *batches* batches (``32 * batches`` rows for a pipeline without
``batch``), at the end of the data (``complete``: the whole epoch was seen), or when the
sampled arrays exceed :data:`MAX_BYTES`. It is bounded in time and in rows read: it stops
after *seconds* (:data:`MAX_SECONDS`) and once the pipeline's ``filter`` steps have read
*max_rows* rows (:data:`MAX_ROWS`; an endless source behind a filter that passes nothing would
otherwise be read forever), keeping what was sampled so far and saying why it stopped
(``Sample.stopped``); when nothing was sampled by then it is a :class:`SamplingError`. A
filter's predicate is given the bound in the iterator's own copy of the pipeline; the user's
objects are left as they were. When it takes over a second, a progress line is written to
standard error every second.

Example:
    >>> import numpy as np
    >>> import mindspore.dataset as ds
    >>> from graphaudit.capture.data.pipeline import capture_pipeline
    >>> data = ds.NumpySlicesDataset({"x": np.arange(10.0), "label": np.arange(10) % 2}, shuffle=False).batch(4)
    >>> sample = sample_pipeline(capture_pipeline(data, "train"), batches=2)
    >>> sample.rows, sample.complete, sample.column("x").tolist()
    (8, False, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
"""

from __future__ import annotations

import copy
import random
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphaudit.capture.data.pipeline import Pipeline, kept_caches, walk
from graphaudit.errors import SamplingError
from graphaudit.graph import pipeline as gp

__all__ = [
    "MAX_BYTES",
    "MAX_ROWS",
    "MAX_SECONDS",
    "SHUFFLE_CAP",
    "Sample",
    "SamplingError",
    "first_line",
    "sample_pipeline",
]

SHUFFLE_CAP = 1024
MAX_BYTES = 256 * 1024 * 1024
#: How long sampling may take, in seconds (``dataset_seconds=``).
MAX_SECONDS = 60.0
#: How many rows the pipeline's filters may read while sampling (``dataset_max_rows=``).
MAX_ROWS = 1_000_000
ROWS_PER_UNBATCHED = 32
PROGRESS_AFTER = 1.0


@dataclass
class Sample:
    """What was sampled: each column's batches as NumPy arrays, and how the sampling went."""

    columns: dict[str, list[np.ndarray]]
    batches: int
    rows: int
    batched: bool
    complete: bool
    seconds: float
    capped: list[str] = field(default_factory=list)
    stopped: str = ""

    def column(self, name: str) -> np.ndarray | None:
        """Every sampled row of *name*, concatenated (``None`` when the rows' shapes differ)."""
        parts = self.columns.get(name)
        if not parts:
            return None
        if not self.batched:
            shapes = {p.shape for p in parts}
            return np.stack(parts) if len(shapes) == 1 else None
        try:
            return np.concatenate(parts, axis=0)
        except ValueError:
            return None

    def rows_of(self, name: str) -> list[np.ndarray]:
        """Every sampled row of *name*, one array each (rows of different shapes stay apart)."""
        parts = self.columns.get(name) or []
        return list(parts) if not self.batched else [row for part in parts for row in part]

    def batch_sizes(self) -> list[int]:
        """The number of rows of each sampled batch."""
        first = next(iter(self.columns.values()), [])
        return [len(p) if self.batched and np.ndim(p) else 1 for p in first]

    def describe(self) -> str:
        """How much was sampled, in words: "the first 8 batches (256 rows)" or "all 40 rows"."""
        unit = f"{self.batches} batch{'es' if self.batches != 1 else ''} ({self.rows} rows)"
        stopped = f", {self.stopped}" if self.stopped else ""
        return f"all {unit} of one epoch" if self.complete else f"the first {unit}{stopped}"


class _BoundReached(Exception):
    """Raised inside a filter's predicate (in the iterator's copy) when sampling must stop."""


class _Bound:
    """The limits of one sampling: a deadline, and the rows the pipeline's filters may read."""

    def __init__(self, seconds: float, max_rows: int) -> None:
        self.seconds, self.max_rows = seconds, max_rows
        self.start = time.perf_counter()
        self.rows_read = 0
        self.reached = ""

    def check(self) -> None:
        if self.reached:
            raise _BoundReached(self.reached)
        elapsed = time.perf_counter() - self.start
        if elapsed > self.seconds:
            self.reached = f"stopped after {elapsed:.1f} s (dataset_seconds={self.seconds:g})"
        elif self.rows_read > self.max_rows:
            self.reached = (
                f"stopped after its filters read {self.rows_read} rows (dataset_max_rows={self.max_rows})"
            )
        if self.reached:
            raise _BoundReached(self.reached)

    def guard(self, predicate: Any) -> Any:
        def bounded_predicate(*row: Any) -> Any:
            self.rows_read += 1
            self.check()
            return predicate(*row)

        return bounded_predicate


@contextmanager
def _bounded_filters(root: Any, bound: _Bound) -> Iterator[None]:
    """While the iterator is made (MindSpore copies the pipeline then), every filter's predicate is bounded."""
    swapped = []
    try:
        for obj in walk(root):
            predicate = getattr(obj, "predicate", None)
            if type(obj).__name__ == "FilterDataset" and callable(predicate):
                swapped.append((obj, predicate))
                obj.predicate = bound.guard(predicate)
        yield
    finally:
        for obj, predicate in swapped:
            obj.predicate = predicate


def first_line(err: BaseException) -> str:
    """The first meaningful line of a (MindSpore) error message, with its type."""
    for line in str(err).splitlines():
        line = line.strip()
        if line and not line.startswith("-") and "Call Stack" not in line:
            return f"{type(err).__name__}: {line}"
    return type(err).__name__


def _one_shot_source(pipeline: Pipeline) -> str | None:
    for node, obj in pipeline.objects.items():
        source = getattr(obj, "source", None)
        if type(obj).__name__ != "GeneratorDataset" or source is None:
            continue
        if type(source).__name__ == "_GeneratorWrapper":
            continue  # MindSpore tees a generator object so that every iterator starts over
        if hasattr(source, "__next__") and iter(source) is source:
            return pipeline.graph.nodes[node]["path"]
    return None


@contextmanager
def _random_states_kept() -> Iterator[None]:
    from mindspore.dataset.engine import iterators

    numpy_state, python_state = np.random.get_state(), random.getstate()
    cleanup = getattr(iterators, "_ITERATOR_CLEANUP", None)
    try:
        yield
    finally:
        np.random.set_state(numpy_state)
        random.setstate(python_state)
        if cleanup is not None:
            iterators._ITERATOR_CLEANUP = cleanup


def _to_iterate(pipeline: Pipeline) -> tuple[Any, list[str]]:
    """The pipeline to iterate: the user's own (MindSpore iterates a copy it makes), or a copy of it
    with the shuffle buffers above :data:`SHUFFLE_CAP` capped."""
    root = pipeline.root
    large = [
        node
        for node, obj in pipeline.objects.items()
        if type(obj).__name__ == "ShuffleDataset" and getattr(obj, "buffer_size", 0) > SHUFFLE_CAP
    ]
    if not large:
        return root, []
    with kept_caches(walk(root)):
        root.parent = []  # as MindSpore's own create_ir_tree does: copy the pipeline, not its consumers
        twin = copy.deepcopy(root)
    for original, obj in zip(walk(root), walk(twin)):
        if type(obj).__name__ == "ShuffleDataset" and getattr(original, "buffer_size", 0) > SHUFFLE_CAP:
            obj.buffer_size = SHUFFLE_CAP
    return twin, [pipeline.graph.nodes[node]["path"] for node in large]


class _Progress:
    """A line on standard error every second once *after* seconds have passed."""

    def __init__(self, label: str, total: int, after: float = PROGRESS_AFTER) -> None:
        self.label, self.total, self.after = label, total, after
        self.done = 0
        self.start = time.perf_counter()
        self.shown = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _line(self, final: bool = False) -> None:
        elapsed = time.perf_counter() - self.start
        state = "done" if final else "sampling"
        sys.stderr.write(
            f"graphaudit: {state} {self.label}: {self.done}/{self.total} batches, {elapsed:.1f} s\n"
        )
        sys.stderr.flush()
        self.shown = True

    def _run(self) -> None:
        if self._stop.wait(self.after):
            return
        while True:
            self._line()
            if self._stop.wait(1.0):
                return

    def __enter__(self) -> _Progress:
        if self.after != float("inf"):
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        if self.shown:
            self._line(final=True)


def _batched(pipeline: Pipeline) -> bool:
    return any(
        d["op"] in ("batch", "padded_batch", "bucket_batch_by_length") for _, d in gp.steps(pipeline.graph)
    )


def sample_pipeline(
    pipeline: Pipeline,
    batches: int,
    *,
    label: str = "the data",
    progress: bool = True,
    max_bytes: int = MAX_BYTES,
    seconds: float = MAX_SECONDS,
    max_rows: int = MAX_ROWS,
) -> Sample:
    """Sample up to *batches* batches of *pipeline* (see the module docstring); raise :class:`SamplingError`.

    Sampling stops after *seconds*, or once the pipeline's filters have read *max_rows* rows.
    """
    one_shot = _one_shot_source(pipeline)
    if one_shot is not None:
        raise SamplingError(
            f"the source {one_shot} reads a one-shot Python iterator: sampling it would consume what the "
            "training will read; give GeneratorDataset a generator function or an object whose __iter__ starts over"
        )
    batched = _batched(pipeline)
    wanted = batches if batched else batches * ROWS_PER_UNBATCHED
    columns: dict[str, list[np.ndarray]] = {}
    pulled, size, stopped, complete = 0, 0, "", False
    start = time.perf_counter()
    bound = _Bound(seconds, max_rows)
    after = PROGRESS_AFTER if progress else float("inf")
    with kept_caches(walk(pipeline.root)), _random_states_kept(), _Progress(label, wanted, after) as shown:
        try:
            chosen, capped = _to_iterate(pipeline)
            with _bounded_filters(chosen, bound):
                iterator = chosen.create_dict_iterator(num_epochs=1, output_numpy=True)
        except Exception as err:
            raise SamplingError(f"MindSpore could not start the pipeline: {first_line(err)}") from err
        try:
            while pulled < wanted:
                try:
                    bound.check()
                    row = next(iterator)
                except StopIteration:
                    complete = True
                    break
                except Exception:
                    if not bound.reached:
                        raise
                    stopped = bound.reached
                    break
                for name, value in row.items():
                    array = np.asarray(value)
                    columns.setdefault(name, []).append(array)
                    size += array.nbytes
                pulled += 1
                shown.done = pulled
                if size > max_bytes:
                    stopped = f"stopped at {size // 2**20} MiB of sampled arrays"
                    break
        except Exception as err:
            raise SamplingError(
                f"the pipeline failed while graphaudit read batch {pulled + 1}: {first_line(err)}"
            ) from err
        finally:
            iterator.stop()
    if stopped and not pulled:
        raise SamplingError(
            f"sampling {stopped} without a single {'batch' if batched else 'row'} coming out of the pipeline "
            "(a filter that passes nothing?); give more with dataset_seconds= / dataset_max_rows=, or check the "
            "pipeline's filters"
        )
    rows = sum(len(a) if batched and np.ndim(a) else 1 for a in next(iter(columns.values()), []))
    return Sample(columns, pulled, rows, batched, complete, time.perf_counter() - start, capped, stopped)
