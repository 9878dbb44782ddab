"""A dumped batch given by keyword (``input_ids=``, ``attention_mask=``) matched with the port's arguments by name.

:func:`graphaudit.reference.dump` records a dict batch under its names (``inputs.npz`` and the
manifest's ``inputs``). Passed by position, ``attention_mask`` would land in whatever the
port's ``construct`` takes second (``token_type_ids`` for a BERT): :func:`bind_by_name` puts
each array in the ``construct`` parameter of its name, the others left at their defaults, and
:func:`check_given_by_name` checks an ``inputs=`` tuple against the dump name by name. A name
one side has and the other lacks is refused with an :class:`~graphaudit.errors.InputError`.

Example:
    >>> import numpy as np
    >>> from mindspore import nn
    >>> class Port(nn.Cell):
    ...     def construct(self, input_ids, token_type_ids=None, attention_mask=None):
    ...         return input_ids
    >>> ids, mask = np.zeros((1, 3), np.int64), np.ones((1, 3), np.int64)
    >>> args, keywords = bind_by_name(Port(), ["input_ids", "attention_mask"], [ids, mask], "dump/")
    >>> [type(a).__name__ for a in args], keywords
    (['Tensor', 'NoneType', 'Tensor'], {})
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from graphaudit.errors import InputError

__all__ = ["bind_by_name", "check_given_by_name", "is_dumped"]


def is_dumped(tensor: Any, array: np.ndarray) -> bool:
    """Whether *tensor* (given to the audit) is *array* (what the original was run on), up to rounding."""
    from graphaudit.capture.network.values import tensor_values

    return tuple(tensor.shape) == array.shape and np.allclose(
        tensor_values(tensor), array, rtol=1e-6, atol=1e-6
    )


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _signature(net: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(net.construct)
    except (TypeError, ValueError):  # a construct without a Python signature: names cannot be checked
        return None


def bind_by_name(
    net: Any, names: list[str], arrays: list[np.ndarray], source: str
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The positional and keyword arguments of ``net.construct`` that give each dumped array by its name."""
    from mindspore import Tensor

    values = dict(zip(names, (Tensor(a) for a in arrays)))
    signature = _signature(net)
    if signature is None:
        return (), values
    params = signature.parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    unknown = [n for n in names if n not in params and not takes_any]
    if unknown:
        raise InputError(
            f"the original was run with {_listed(unknown)} (by keyword, in {source}), which "
            f"{type(net).__name__}.construct{signature} does not take: name the port's argument as the "
            "original's, or pass inputs= yourself in the order construct() takes them."
        )
    needed = [
        n
        for n, p in params.items()
        if p.default is inspect.Parameter.empty and p.kind not in _VARIADIC and n not in values
    ]
    if needed:
        raise InputError(
            f"{type(net).__name__}.construct{signature} needs {_listed(needed)}, which the original was not "
            f"given (its batch in {source}: {', '.join(names)}): pass inputs= yourself, or dump the original "
            "with that input too."
        )
    positional = [n for n, p in params.items() if p.kind in _POSITIONAL]
    last = max((positional.index(n) for n in names if n in positional), default=-1)
    args = tuple(values[n] if n in values else params[n].default for n in positional[: last + 1])
    keywords = {n: v for n, v in values.items() if n not in positional[: last + 1]}
    return args, keywords


def check_given_by_name(
    net: Any, given: tuple[Any, ...], names: list[str], arrays: list[np.ndarray], source: str
) -> None:
    """Refuse ``inputs=`` that do not give, by ``construct``'s parameter names, the batch dumped by keyword."""
    signature = _signature(net)
    if signature is None:
        return
    try:
        bound = signature.bind_partial(*given).arguments
    except TypeError:
        return  # the audit's own input check says what is wrong with them
    tensors = {n: v for n, v in bound.items() if hasattr(v, "asnumpy")}
    missing = [n for n in names if n not in tensors]
    extra = [n for n in tensors if n not in names]
    differ = [n for n, a in zip(names, arrays) if n in tensors and not (is_dumped(tensors[n], a))]
    if not (missing or extra or differ):
        return
    said = []
    if missing:
        said.append(f"gives no {_listed(missing)}")
    if extra:
        said.append(f"gives {_listed(extra)}, which the original was not given")
    if differ:
        said.append(f"gives another {_listed(differ)} than the original's")
    raise InputError(
        f"inputs= (bound to {type(net).__name__}.construct{signature}) {'; '.join(said)}: the original was "
        f"dumped on {', '.join(names)} by keyword (in {source}), so its outputs are another batch's. Leave "
        "inputs= out (the dump's batch is passed by name) or dump the original again on this batch."
    )


def _listed(names: list[str]) -> str:
    return ", ".join(repr(n) for n in names)
