"""Where each element of an index-moving operation's outputs comes from: the op node's ``layout``.

Operations such as ``ops.concat``, ``x[:, 64:]``, ``ops.split``, ``x.transpose`` or
``x.view`` only move values. A check that asks "which part of this tensor was made by a
sigmoid?" has to follow the parts through them, which the ``flows`` edges alone cannot say
(a concat of a box branch and a class branch, sliced again by a detection loss). The
tracer records, on the op node of each such operation, a ``layout``: JSON text
``{"kind": ..., "in": [shapes], "out": [shapes], ...}`` with, by kind,

- ``"reshape"``: the elements in row-major order, in the output's shape (``view``,
  ``reshape``, ``flatten``, ``squeeze``, ``unsqueeze``, ``expand_dims``);
- ``"concat"`` / ``"stack"``, ``"axis"``: the inputs joined along that axis;
- ``"split"``, ``"axis"``: the input cut into the outputs, in order, along that axis;
- ``"transpose"``, ``"perm"``: the axes of the input, permuted;
- ``"getitem"``, ``"key"``: basic indexing (``x[...]``, ``narrow``), the key encoded by
  :func:`encode_key`: ints, ``{"slice": [start, stop, step]}``, ``"..."`` and ``null``
  (a new axis).

``in`` holds the shapes of the operation's tensor arguments in the order of their
``flows`` edges' ``dst_slot``, ``out`` the shapes of its outputs (``src_slot``). An
operation whose arguments cannot be read this way (an index tensor, a primitive whose axis
is an attribute and cannot be told from the shapes) gets no layout.
:func:`graphaudit.checks._shared.regions.carry` replays a layout.

Example:
    >>> import json
    >>> import numpy as np
    >>> from mindspore import Tensor
    >>> x = Tensor(np.zeros((2, 144, 84), np.float32))
    >>> json.loads(layout_of("getitem", (x, (slice(None), slice(-80, None))), {}, [x[:, -80:]]))
    {'kind': 'getitem', 'in': [[2, 144, 84]], 'out': [[2, 80, 84]], 'key': [{'slice': [None, None, None]}, {'slice': [-80, None, None]}]}
"""

from __future__ import annotations

import json
from typing import Any, Final

import numpy as np
from mindspore import Tensor

__all__ = ["LAYOUT_OPS", "encode_key", "layout_of"]

_RESHAPES: Final = frozenset({"view", "reshape", "flatten", "squeeze", "unsqueeze", "expanddims", "ravel"})
_TRANSPOSES: Final = frozenset({"transpose", "permute", "swapaxes", "swapdims", "movedim", "moveaxis"})
_JOINS: Final = {"concat": "concat", "cat": "concat", "stack": "stack"}
_SPLITS: Final = frozenset({"split", "chunk", "tensorsplit", "splitwithsize"})
LAYOUT_OPS: Final = _RESHAPES | _TRANSPOSES | _SPLITS | frozenset(_JOINS) | {"getitem", "narrow"}


def _shape(tensor: Any) -> list[int]:
    return [int(d) for d in tensor.shape]


def _ints(values: tuple[Any, ...]) -> list[int] | None:
    """The ints among *values* (a tuple or list of ints counts as its items); None if anything else."""
    found: list[int] = []
    for value in values:
        if isinstance(value, (tuple, list)) and all(isinstance(v, int) for v in value):
            found.extend(int(v) for v in value)
        elif isinstance(value, int) and not isinstance(value, bool):
            found.append(int(value))
        else:
            return None
    return found


def encode_key(key: Any) -> list[Any] | None:
    """A basic-indexing key as JSON (``None`` when it holds a tensor, a list or a bool).

    Example:
        >>> encode_key((Ellipsis, slice(0, 4), None, 2))
        ['...', {'slice': [0, 4, None]}, None, 2]
    """
    items = key if isinstance(key, tuple) else (key,)
    encoded: list[Any] = []
    for item in items:
        if item is Ellipsis:
            encoded.append("...")
        elif item is None or (isinstance(item, int) and not isinstance(item, bool)):
            encoded.append(item)
        elif isinstance(item, slice) and all(
            v is None or (isinstance(v, int) and not isinstance(v, bool))
            for v in (item.start, item.stop, item.step)
        ):
            encoded.append({"slice": [item.start, item.stop, item.step]})
        else:
            return None
    return encoded


def decode_key(encoded: list[Any]) -> tuple[Any, ...]:
    """The key :func:`encode_key` encoded, for numpy."""
    return tuple(
        Ellipsis if item == "..." else slice(*item["slice"]) if isinstance(item, dict) else item
        for item in encoded
    )


def _perm(op_type: str, ndim: int, rest: tuple[Any, ...], kwargs: dict[str, Any]) -> list[int] | None:
    """The permutation a transpose-like call makes of *ndim* axes, from its arguments."""
    values = _ints(
        rest + tuple(kwargs.get(k) for k in ("perm", "axes", "dims", "dim0", "dim1") if k in kwargs)
    )
    if values is None:
        return None
    values = [v % ndim for v in values] if ndim else values
    if op_type in ("movedim", "moveaxis") and len(values) == 2:
        return [int(a) for a in np.moveaxis(np.arange(ndim), values[0], values[1])]
    if len(values) == ndim and sorted(values) == list(range(ndim)):
        return values
    if len(values) == 2:  # transpose(dim0, dim1), swapaxes
        perm = list(range(ndim))
        perm[values[0]], perm[values[1]] = perm[values[1]], perm[values[0]]
        return perm
    return None


def _joined_axis(
    kind: str, ins: list[list[int]], out: list[int], rest: tuple[Any, ...], kwargs: dict[str, Any]
) -> int | None:
    """The axis a concat (told by the shapes) or a stack (its argument, checked) joins along."""
    if kind == "concat":
        axes = [
            a
            for a in range(len(out))
            if all(len(s) == len(out) and all(s[d] == out[d] for d in range(len(out)) if d != a) for s in ins)
            and sum(s[a] for s in ins) == out[a]
        ]
        return axes[0] if axes else None
    given = _ints(rest[:1] + tuple(kwargs[k] for k in ("axis", "dim") if k in kwargs))
    axis = (given[0] if given else 0) % len(out) if out else None
    if axis is None or out[axis] != len(ins) or any(out[:axis] + out[axis + 1 :] != s for s in ins):
        return None
    return axis


def _split_axis(ins: list[int], outs: list[list[int]]) -> int | None:
    axes = [
        a
        for a in range(len(ins))
        if all(len(s) == len(ins) and all(s[d] == ins[d] for d in range(len(ins)) if d != a) for s in outs)
        and sum(s[a] for s in outs) == ins[a]
    ]
    return axes[0] if axes else None


def _indexed_shape(shape: list[int], key: tuple[Any, ...]) -> list[int] | None:
    try:
        return list(np.broadcast_to(np.zeros((), bool), shape)[key].shape)
    except (IndexError, TypeError, ValueError):
        return None


def layout_of(op_type: str, args: tuple[Any, ...], kwargs: dict[str, Any], outputs: list[Any]) -> str | None:
    """The ``layout`` of one recorded operation (JSON text), or ``None`` when it moves nothing readable.

    *args* / *kwargs* are the call's arguments (the data tensor first), *outputs* its output
    tensors. Every layout is checked against the shapes it has to produce.
    """
    if op_type not in LAYOUT_OPS or not outputs or not args:
        return None
    outs = [_shape(t) for t in outputs]
    first, rest = args[0], tuple(args[1:])
    if op_type in _JOINS:
        tensors = list(first) if isinstance(first, (tuple, list)) else []
        if not tensors or not all(isinstance(t, Tensor) for t in tensors) or len(outs) != 1:
            return None
        ins = [_shape(t) for t in tensors]
        axis = _joined_axis(_JOINS[op_type], ins, outs[0], rest, kwargs)
        found: dict[str, Any] = {"kind": _JOINS[op_type], "axis": axis}
    else:
        if not isinstance(first, Tensor) or any(isinstance(a, Tensor) for a in (*rest, *kwargs.values())):
            return None
        ins = [_shape(first)]
        found = _single(op_type, ins[0], outs, rest, kwargs)
    if found is None or any(v is None for v in found.values()):
        return None
    return json.dumps({"kind": found.pop("kind"), "in": ins, "out": outs, **found})


def _single(
    op_type: str, shape: list[int], outs: list[list[int]], rest: tuple[Any, ...], kwargs: dict[str, Any]
) -> dict[str, Any] | None:
    """The layout of an operation on one data tensor (without its shapes)."""
    if op_type in _SPLITS:
        return {"kind": "split", "axis": _split_axis(shape, outs)}
    if len(outs) != 1:
        return None
    if op_type in _RESHAPES:
        return {"kind": "reshape"} if int(np.prod(shape)) == int(np.prod(outs[0])) else None
    if op_type in _TRANSPOSES:
        perm = _perm(op_type, len(shape), rest, kwargs)
        ok = perm is not None and [shape[a] for a in perm] == outs[0]
        return {"kind": "transpose", "perm": perm} if ok else None
    if op_type == "narrow":
        values = _ints(rest + tuple(kwargs[k] for k in ("axis", "dim", "start", "length") if k in kwargs))
        if values is None or len(values) != 3 or not shape:
            return None
        axis, start, length = values[0] % len(shape), values[1], values[2]
        key: list[Any] | None = [{"slice": [None, None, None]}] * axis + [
            {"slice": [start, start + length, None]}
        ]
    else:
        key = encode_key(rest[0]) if len(rest) == 1 else None
    if key is None or _indexed_shape(shape, decode_key(key)) != outs[0]:
        return None
    return {"kind": "getitem", "key": key}
