"""Which part of a tensor was made by what: element-wise origins, carried through index-moving operations.

A tensor's *origins* are an ``int32`` array of its shape: each element holds the index of
the node that made it in a list the caller keeps (``-1``: not known). :func:`carry`
replays the ``layout`` the tracer recorded on an op node (see
:mod:`graphaudit.capture.network.layout`) on the origins of its inputs, giving those of its
outputs: a concat of a box branch and a class branch keeps, element by element, which
branch each value came from through the reshapes, concats, slices and transposes a
detection loss applies before its ``BCEWithLogitsLoss``.

Tensors of more than :data:`MAX_ELEMENTS` elements are not carried (``carry`` returns
``None``): the caller then falls back to what it knows of the tensor as a whole.

Example:
    >>> import json
    >>> import numpy as np
    >>> box, cls = np.zeros((2, 4), np.int32), np.ones((2, 3), np.int32)
    >>> joined = {"kind": "concat", "axis": 1, "in": [[2, 4], [2, 3]], "out": [[2, 7]]}
    >>> [out] = carry(json.dumps(joined), [box, cls])
    >>> out[0]
    array([0, 0, 0, 0, 1, 1, 1], dtype=int32)
    >>> sliced = {"kind": "getitem", "in": [[2, 7]], "out": [[2, 3]], "key": [{"slice": [None, None, None]}, {"slice": [-3, None, None]}]}
    >>> carry(json.dumps(sliced), [out])[0].tolist()
    [[1, 1, 1], [1, 1, 1]]
"""

from __future__ import annotations

import json
from typing import Final

import numpy as np

__all__ = ["MAX_ELEMENTS", "UNKNOWN", "carry", "filled", "reshaped"]

MAX_ELEMENTS: Final = 1 << 22  # 4 Mi elements (16 MiB of origins): an output, not an activation map
UNKNOWN: Final = -1


def filled(shape: list[int], origin: int) -> np.ndarray | None:
    """Origins of a tensor of *shape* made whole by one node (``None`` when too large).

    Example:
        >>> filled([2, 2], 3).tolist()
        [[3, 3], [3, 3]]
    """
    if int(np.prod(shape, dtype=np.int64)) > MAX_ELEMENTS:
        return None
    return np.full(shape, origin, np.int32)


def reshaped(origins: np.ndarray | None, shape: list[int]) -> np.ndarray | None:
    """*origins* in *shape* (row-major, as ``view``/``reshape``), or ``None`` when the sizes differ."""
    if origins is None or origins.size != int(np.prod(shape, dtype=np.int64)):
        return None
    return origins.reshape(shape)


def carry(layout: str, inputs: list[np.ndarray | None]) -> list[np.ndarray] | None:
    """The origins of an operation's outputs, from its *layout* and its inputs' origins.

    *inputs* are by ``dst_slot``; a missing or ``None`` input (a tensor made where the
    tracer does not see) counts as :data:`UNKNOWN`. ``None`` when the layout cannot be
    replayed (too large, or shapes that do not agree).
    """
    spec = json.loads(layout)
    ins: list[np.ndarray] = []
    for slot, shape in enumerate(spec["in"]):
        given = inputs[slot] if slot < len(inputs) else None
        made = given if given is not None and list(given.shape) == shape else filled(shape, UNKNOWN)
        if made is None:
            return None
        ins.append(made)
    try:
        outs = _replay(spec, ins)
    except (IndexError, ValueError, TypeError):
        return None
    if [list(o.shape) for o in outs] != spec["out"]:
        return None
    return [np.ascontiguousarray(o) for o in outs]


def _replay(spec: dict, ins: list[np.ndarray]) -> list[np.ndarray]:
    kind = spec["kind"]
    if kind == "reshape":
        return [ins[0].reshape(spec["out"][0])]
    if kind == "concat":
        return [np.concatenate(ins, axis=spec["axis"])]
    if kind == "stack":
        return [np.stack(ins, axis=spec["axis"])]
    if kind == "transpose":
        return [ins[0].transpose(spec["perm"])]
    if kind == "split":
        axis = spec["axis"]
        bounds = np.cumsum([shape[axis] for shape in spec["out"]])[:-1]
        return list(np.split(ins[0], bounds, axis=axis))
    if kind == "getitem":
        key = tuple(
            Ellipsis if k == "..." else slice(*k["slice"]) if isinstance(k, dict) else k for k in spec["key"]
        )
        return [ins[0][key]]
    raise ValueError(f"unknown layout kind {kind!r}")
