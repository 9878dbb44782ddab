"""GA004 train-eval-preprocessing-mismatch."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors
from graphaudit.checks._shared.data_pipeline import SIZING, Preparation, preparation
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample, EvalSample, EvaluationData, TrainingData
from graphaudit.findings import Cause, Finding, Severity
from graphaudit.graph.pipeline import column_subject
from graphaudit.text import bracketed

_VALUE_OPS = ("Rescale", "Normalize", "NormalizePad", "ToTensor")


@dataclass(frozen=True)
class PreprocessingDiffers(Cause):
    """A column prepared differently for evaluation than for training, in one *aspect*.

    *training* and *evaluation* hold that aspect on each side: ``"values"``, the per-channel
    scales and shifts of the value map (``((scale, ...), (shift, ...))``); ``"size"``, the image
    size the network gets; ``"layout"``, the channel order; ``"colour"``; ``"cast"``, the dtype
    it is cast to; ``"transforms"``, the other deterministic transforms, by name; ``"resize"``,
    the size of the resize before the crop; ``"sampled shape"`` and ``"sampled dtype"``, what
    the sampled rows hold.
    """

    column: str
    aspect: str
    training: str | tuple[Any, ...]
    evaluation: str | tuple[Any, ...]

    def message(self) -> str:
        return (
            f"The column {self.column!r} is prepared differently for evaluation than for training: {self._what()}. "
            "The model is evaluated on data unlike the data it learnt from."
        )

    def _what(self) -> str:
        t, e = self.training, self.evaluation
        if self.aspect == "values":
            return (
                f"its values are scaled differently: training maps a pixel value x to {_value_map(*t)}, evaluation "
                f"to {_value_map(*e)} (Rescale / Normalize / ToTensor)"
            )
        if self.aspect == "size":
            return f"the network gets {t[0]}x{t[1]} images in training and {e[0]}x{e[1]} in evaluation"
        if self.aspect == "layout":
            return f"its channel order is {t} in training and {e} in evaluation (HWC2CHW)"
        if self.aspect == "colour":
            return f"its colours are {t} in training and {e} in evaluation"
        if self.aspect == "cast":
            return f"it is cast to {t} in training and to {e} in evaluation"
        if self.aspect == "transforms":
            return (
                f"deterministic transforms differ: training applies {list(t) or 'none'}, evaluation "
                f"{list(e) or 'none'}"
            )
        if self.aspect == "resize":
            return (
                f"it is resized to {t} before the crop in training and to {e} in evaluation: objects appear at "
                "another scale"
            )
        if self.aspect == "sampled shape":
            return f"its sampled rows have shape {list(t)} in training and {list(e)} in evaluation"
        return f"its sampled values are {t} in training and {e} in evaluation"

    def fix(self) -> str:
        return (
            "Apply the same deterministic preprocessing in both pipelines (one shared list of transforms, "
            "with the augmentations added for training only)."
        )


#: A difference: its severity, its aspect, the aspect in training and in evaluation, and the steps that
#: make it in evaluation, then in training.
Issue = tuple[Severity, str, Any, Any, list[str], list[str]]


def _value_map(scale: Sequence[float], shift: Sequence[float]) -> str:
    scale, shift = list(scale) or [1.0], list(shift) or [0.0]
    if all(s == 1 for s in scale) and all(b == 0 for b in shift):
        return "x itself (no scaling)"
    if len(set(scale)) == 1 and len(set(shift)) == 1:
        scale, shift = scale[:1], shift[:1]
    parts = [f"x * {s:.5g} {'+' if b >= 0 else '-'} {abs(b):.5g}" for s, b in zip(scale, shift)]
    return parts[0] if len(parts) == 1 else f"{bracketed(parts)} per channel"


def _values(prep: Preparation) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The value map of *prep*: its per-channel scales and shifts."""
    return tuple(float(s) for s in prep.scale or []), tuple(float(b) for b in prep.shift or [])


def _same_values(a: Preparation, b: Preparation) -> bool:
    n = max(len(a.scale or []), len(b.scale or []))
    widen = lambda v: np.resize(np.asarray(v, dtype=np.float64), n)  # noqa: E731
    return bool(
        np.allclose(widen(a.scale), widen(b.scale), rtol=1e-3, atol=1e-7)
        and np.allclose(widen(a.shift), widen(b.shift), rtol=1e-3, atol=1e-4)
    )


def _paths(graph: nx.MultiDiGraph, nodes: list[str]) -> list[str]:
    return [graph.nodes[n]["path"] for n in nodes]


def _map_of(graph: nx.MultiDiGraph, prep: Preparation) -> str | None:
    """The path of the map() step that prepares the column last (where a missing transform goes), if any."""
    return graph.nodes[prep.transforms[-1]]["path"].rsplit("/", 1)[0] if prep.transforms else None


def _ints(shape: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(d) for d in shape)


def _structural(
    train: nx.MultiDiGraph, evaluate: nx.MultiDiGraph, t: Preparation, e: Preparation
) -> list[Issue]:
    issues: list[Issue] = []
    value_nodes = [n for n in t.transforms if train.nodes[n]["name"] in _VALUE_OPS]
    eval_value_nodes = [n for n in e.transforms if evaluate.nodes[n]["name"] in _VALUE_OPS]
    if t.value_map_known and e.value_map_known and not _same_values(t, e):
        issues.append(
            (
                "error",
                "values",
                _values(t),
                _values(e),
                _paths(evaluate, eval_value_nodes),
                _paths(train, value_nodes),
            )
        )
    if t.size and e.size and len(t.size) == len(e.size) == 2 and t.size != e.size:
        issues.append(
            (
                "error",
                "size",
                _ints(t.size),
                _ints(e.size),
                _paths(evaluate, [e.size_node] if e.size_node else []),
                _paths(train, [t.size_node] if t.size_node else []),
            )
        )
    if t.layout != e.layout:
        issues.append(("error", "layout", t.layout, e.layout, [], []))
    if t.color != e.color:
        issues.append(("error", "colour", t.color, e.color, [], []))
    if t.dtype and e.dtype and t.dtype != e.dtype:
        issues.append(("error", "cast", t.dtype, e.dtype, [], []))
    if sorted(t.other) != sorted(e.other):
        issues.append(("warning", "transforms", tuple(sorted(t.other)), tuple(sorted(e.other)), [], []))
    random_sizing = any(train.nodes[n]["name"] in SIZING for n in t.random)
    if not random_sizing and t.resize and e.resize and t.resize != e.resize and t.size == e.size:
        issues.append(("warning", "resize", _ints(t.resize), _ints(e.resize), [], []))
    return issues


def _sampled(ctx: AuditContext, column: str, eval_column: str, reported: set[str]) -> list[Issue]:
    """The differences the sampled rows show that the *reported* aspects do not already explain."""
    train, evaluate = ctx.get(DataSample), ctx.get(EvalSample)
    if train is None or evaluate is None:
        return []
    a, b = train.sample.column(column), evaluate.sample.column(eval_column)
    if a is None or b is None:
        return []
    issues: list[Issue] = []
    if a.shape[1:] != b.shape[1:] and not reported & {"size", "layout"}:
        issues.append(("error", "sampled shape", _ints(a.shape[1:]), _ints(b.shape[1:]), [], []))
    if a.dtype != b.dtype and not reported & {"cast", "values"}:
        issues.append(("error", "sampled dtype", str(a.dtype), str(b.dtype), [], []))
    return issues


@register(
    "GA004",
    "train-eval-preprocessing-mismatch",
    severity="error",
    also=("warning",),
    needs=(
        TrainingData,
        EvaluationData,
    ),
    uses=(
        DataSample,
        EvalSample,
    ),
    once="one finding per data column and difference: each column's preprocessing is written on its own, for training and for evaluation",
    causes=(PreprocessingDiffers,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Evaluation data prepared differently from training data: other scaling, size, channel or colour order, dtype.

    What it does:
        Follows each input column (every column but the label, paired by position) through
        the transforms of the training and the evaluation pipeline and compares what reaches
        the network. Errors: a different value map (``Rescale``, ``Normalize`` and
        ``ToTensor`` composed into ``x * scale + shift`` per channel, so that
        ``Rescale(1/255) + Normalize(m, s)`` equals ``Normalize(255 m, 255 s)``); a different
        output size of the last resize or crop; a different channel order (``HWC2CHW``,
        ``ToTensor``), colour order (``ConvertColor``, ``Decode(rgb=False)``) or dtype cast; and,
        when both were sampled, rows of other shapes or dtypes. Warnings: other deterministic
        transforms (``Grayscale``, ``AdjustGamma``...) on one side only; a different resize
        before the final crop when training resizes deterministically too. A training
        ``RandomResizedCrop(224)`` against an evaluation ``Resize(256)`` + ``CenterCrop(224)``
        is the usual recipe and is not reported; random augmentation in evaluation is GA005.
        A Python function in either chain makes the value map unknown: it is not compared.

    Why is this bad:
        MindSpore's accuracy guide (§1.2, "data processing that differs from training"): when
        inference scales, crops or normalises images with other parameters than training, the
        data the model sees at inference follows another distribution than the one it learnt,
        and accuracy drops without any error.

    Example:
        ```python
        train = src.map([vision.Decode(), vision.RandomResizedCrop(224), vision.Rescale(1 / 255, 0),
                         vision.Normalize(MEAN, STD), vision.HWC2CHW()], "image")
        eval_ds = val.map([vision.Decode(), vision.Resize(256), vision.CenterCrop(224), vision.HWC2CHW()], "image")
        ```

    Use instead:
        ```python
        eval_ds = val.map([vision.Decode(), vision.Resize(256), vision.CenterCrop(224), vision.Rescale(1 / 255, 0),
                           vision.Normalize(MEAN, STD), vision.HWC2CHW()], "image")
        ```
    """
    train, evaluate = ctx.need(TrainingData), ctx.need(EvaluationData)
    for column, eval_column in zip(train.features, evaluate.features):
        t, e = preparation(train.graph, column), preparation(evaluate.graph, eval_column)
        issues = _structural(train.graph, evaluate.graph, t, e)
        issues += _sampled(ctx, column, eval_column, {aspect for _, aspect, *_ in issues})
        for severity, aspect, in_training, in_evaluation, in_eval, in_train in issues:
            # the first subject is where the fix goes: evaluation is prepared to match training, so its
            # step (or, when it has none, its column) leads, never the correct training step
            subject = (
                in_eval[0]
                if in_eval
                else _map_of(evaluate.graph, e) or column_subject(evaluate.name, eval_column)
            )
            both = [column_subject(train.name, column), column_subject(evaluate.name, eval_column)]
            paths = in_eval + in_train
            cause = PreprocessingDiffers(column, aspect, in_training, in_evaluation)
            yield ctx.finding(
                severity,
                subject,
                cause,
                anchors(ctx, column=column),
                subjects=list(dict.fromkeys([subject, *paths, *both])),
            )
