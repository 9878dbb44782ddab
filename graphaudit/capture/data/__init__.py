"""Data pipelines: a ``mindspore.dataset`` pipeline read as a graph, its labels, a bounded sample.

:mod:`~graphaudit.capture.data.pipeline` reads the pipeline from MindSpore's own description;
:mod:`~graphaudit.capture.data.operations` is what it knows about each operation;
:mod:`~graphaudit.capture.data.labels` and :mod:`~graphaudit.capture.data.sampling` read
labels and batches without touching the user's iterators.
"""
