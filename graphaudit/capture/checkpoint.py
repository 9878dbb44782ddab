"""What ``load_param_into_net`` would load from a checkpoint, worked out without loading anything.

:func:`read_entries` reads a checkpoint's names, shapes and dtypes (``mindspore.load_checkpoint``
into a dict of its own, or a dict given as it is); :func:`plan_load` applies MindSpore 2.10's
matching rules (``mindspore/train/serialization.py``: ``load_param_into_net``,
``_load_dismatch_prefix_params``, ``_update_param``) to the network's parameters:

1. each parameter (``net.parameters_and_names()``) is matched by ``Parameter.name``;
   parameters named ``accu_grads*`` are skipped;
2. with ``strict_load=False`` (the default), for the parameters left, MindSpore looks for a
   checkpoint name that *ends with* one of their names, takes what comes before as a prefix
   and loads ``prefix + name`` for every parameter left, and repeats: a checkpoint saved from
   a wrapper (``network.backbone.conv.weight``) loads into the bare network. The opposite
   (the network's names carry a prefix the checkpoint lacks) is not matched;
3. a matched entry must have the parameter's shape (or the same with trailing 1s), else
   ``load_param_into_net`` raises ``RuntimeError``; a different dtype is converted when both
   are floats (or both ints) and ``strict_load=False``, else it raises too.

The network is never touched: this is a plan, not a load.

Example:
    >>> from mindspore import nn
    >>> net = nn.SequentialCell([nn.Dense(2, 3), nn.Dense(3, 1)])
    >>> entries = {"0.weight": ((3, 2), "Float32"), "0.bias": ((3,), "Float32"), "1.weight": ((2, 3), "Float32")}
    >>> plan = plan_load(net, entries)
    >>> plan.not_loaded, [(m.parameter, m.problem) for m in plan.mismatched], plan.unused
    (['1.bias'], [('1.weight', 'shape')], [])
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphaudit.errors import ArgumentError, ArgumentTypeError

__all__ = ["Entry", "LoadPlan", "Mismatch", "plan_load", "read_entries", "suggest_prefix"]

Entry = tuple[tuple[int, ...], str]  # shape, dtype
_FLOATS = {"Float16", "Float32", "Float64", "BFloat16"}
_INTS = {"Int8", "Int16", "Int32", "Int64"}


@dataclass(frozen=True)
class Mismatch:
    """A parameter matched to an entry that ``load_param_into_net`` refuses (``problem``: shape or dtype)."""

    parameter: str
    entry: str
    problem: str
    expected: Entry
    found: Entry


@dataclass
class LoadPlan:
    """What the load would do: ``loaded`` parameter -> entry, ``prefix`` loads among them, the rest."""

    loaded: dict[str, str] = field(default_factory=dict)
    prefixed: dict[str, str] = field(default_factory=dict)  # loaded through a prefix (rule 2)
    not_loaded: list[str] = field(default_factory=list)
    mismatched: list[Mismatch] = field(default_factory=list)
    converted: list[str] = field(default_factory=list)  # dtype converted on load
    unused: list[str] = field(default_factory=list)


def _dtype(value: Any) -> str:
    dtype = getattr(value, "dtype", None)
    if isinstance(value, np.ndarray):
        from mindspore import Tensor

        return str(Tensor(np.zeros((), value.dtype)).dtype)
    return str(dtype)


def read_entries(checkpoint: Any) -> dict[str, Entry]:
    """``name -> (shape, dtype)`` of a checkpoint file (``.ckpt``/``.safetensors``) or a dict of values."""
    if isinstance(checkpoint, Mapping):
        entries = {}
        for name, value in checkpoint.items():
            if not isinstance(name, str) or not hasattr(value, "shape"):
                raise ArgumentTypeError(
                    "checkpoint= takes a checkpoint file or a dict of name -> Parameter/Tensor/ndarray "
                    f"(what mindspore.load_checkpoint returns), got an entry {name!r}: {type(value).__name__}"
                )
            entries[name] = (tuple(int(d) for d in value.shape), _dtype(value))
        return entries
    if not isinstance(checkpoint, (str, os.PathLike)):
        raise ArgumentTypeError(
            f"checkpoint= takes a checkpoint file path or a parameter dict, got {type(checkpoint).__name__}"
        )
    path = os.fspath(checkpoint)
    if not os.path.isfile(path):
        raise ArgumentError(f"checkpoint= {path!r} is not a file: pass the .ckpt the network will load.")
    import mindspore as ms

    fmt = "safetensors" if path.endswith(".safetensors") else "ckpt"
    try:
        loaded = ms.load_checkpoint(path, format=fmt)
    except Exception as err:
        raise ArgumentError(
            f"mindspore.load_checkpoint could not read {path!r}: {type(err).__name__}: {err}"
        ) from err
    return {name: (tuple(int(d) for d in p.shape), str(p.dtype)) for name, p in loaded.items()}


def _compatible(expected: Entry, found: Entry, strict_load: bool) -> str | None:
    """``None`` when the entry loads into the parameter, else ``"shape"`` or ``"dtype"``."""
    shape, dtype = expected
    got_shape, got_dtype = found
    if shape != got_shape:
        extra = got_shape[len(shape) :]
        if not (
            len(got_shape) > len(shape) and got_shape[: len(shape)] == shape and all(d == 1 for d in extra)
        ):
            return "shape"
    if dtype != got_dtype:
        pair = {dtype, got_dtype}
        if strict_load or not (pair <= _FLOATS or pair <= _INTS):
            return "dtype"
    return None


def _prefix_loads(order: list[str], remaining: list[str], names: list[str]) -> dict[str, str]:
    """Rule 2, as ``_load_dismatch_prefix_params`` runs it: parameter -> ``prefix + name``."""
    mapping: dict[str, str] = {}
    known = set(names)
    prefix, longest = "", remaining[0]
    while prefix != longest and remaining:
        prefix = longest
        for name in remaining:
            for entry in names:
                if entry.endswith(name):
                    prefix = entry[: -len(name)]
                    break
            if prefix != longest:
                break
        if prefix != longest:
            for name in order:
                if name in remaining and prefix + name in known:
                    mapping[name] = prefix + name
                    remaining.remove(name)
    return mapping


def plan_load(net: Any, entries: Mapping[str, Entry], strict_load: bool = False) -> LoadPlan:
    """What ``mindspore.load_param_into_net(net, checkpoint, strict_load)`` would do (module docstring)."""
    params = {}
    for _, param in net.parameters_and_names():
        info = getattr(param, "param_info", None)
        if info is not None and getattr(info, "is_pipeline_shared_param", False):
            continue
        params.setdefault(param.name, param)
    plan = LoadPlan()
    for name in params:
        if name in entries:
            plan.loaded[name] = name
        elif not name.startswith("accu_grads"):
            plan.not_loaded.append(name)
    if plan.not_loaded and not strict_load:
        plan.prefixed = _prefix_loads(list(params), plan.not_loaded, list(entries))
        plan.loaded.update(plan.prefixed)
    for name, entry in plan.loaded.items():
        param = params[name]
        expected = (tuple(int(d) for d in param.shape), str(param.dtype))
        problem = _compatible(expected, entries[entry], strict_load)
        if problem is not None:
            plan.mismatched.append(Mismatch(name, entry, problem, expected, entries[entry]))
        elif expected[1] != entries[entry][1]:
            plan.converted.append(name)
    used = set(plan.loaded.values())
    plan.unused = [entry for entry in entries if entry not in used]
    return plan


def suggest_prefix(not_loaded: list[str], unused: list[str]) -> tuple[str, str, list[str]] | None:
    """The renaming that would map unused entries onto parameters not loaded: ``(how, prefix, entries)``.

    ``how`` is ``"add"`` (the checkpoint lacks a prefix the network's names carry: rename
    ``prefix + name``) or ``"strip"`` (the checkpoint's names carry a prefix more, which only
    ``strict_load=False`` removes). The prefix that maps the most entries wins.
    """
    counts: dict[tuple[str, str], list[str]] = {}
    wanted = set(not_loaded)
    for entry in unused:
        for name in wanted:
            if name != entry and name.endswith("." + entry):
                counts.setdefault(("add", name[: -len(entry)]), []).append(entry)
            elif name != entry and entry.endswith("." + name):
                counts.setdefault(("strip", entry[: -len(name)]), []).append(entry)
    if not counts:
        return None
    (how, prefix), mapped = max(counts.items(), key=lambda item: len(item[1]))
    return how, prefix, mapped
