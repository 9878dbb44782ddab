"""What may be passed where a network or its inputs are expected, checked once, with clear errors.

Example:
    >>> import numpy as np
    >>> from mindspore import nn
    >>> normalize_inputs(nn.Dense(2, 1), np.ones((1, 2), np.float32))[0].shape
    (1, 2)
    >>> check_cell([nn.Dense(2, 1)])
    Traceback (most recent call last):
    ...
    graphaudit.errors.NotACellError: to_networkx() expects a mindspore.nn.Cell as `net`, got list: wrap the cells in a container first, e.g. nn.SequentialCell(cells).
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
from mindspore import Tensor, nn

from graphaudit.errors import InputError, NotACellError

__all__ = ["check_cell", "describe_inputs", "normalize_inputs", "normalize_value"]

_SCALARS = (bool, int, float, str, type(None))


def check_cell(net: Any, *, argument: str = "net", function: str = "to_networkx") -> nn.Cell:
    """Return *net* if it is a ``nn.Cell``; raise a :class:`NotACellError` saying what to pass.

    ``jit(cell)`` (the cell's compiled ``construct``, bound to it) stands for the cell.
    """
    from graphaudit.capture.compilation.jit import unwrap_jit_cell

    net = unwrap_jit_cell(net)
    if isinstance(net, nn.Cell):
        return net
    got = type(net).__name__
    if isinstance(net, type) and issubclass(net, nn.Cell):
        hint = f"pass an instance, e.g. {net.__name__}(...), not the class itself"
    elif type(net).__name__ == "Model" and hasattr(net, "predict_network"):
        hint = "pass the network inside the Model, e.g. model.predict_network or model.train_network"
    elif inspect.ismethod(net) and isinstance(getattr(net, "__self__", None), nn.Cell):
        hint = f"pass the cell object itself ({type(net.__self__).__name__} instance), not its method"
    elif isinstance(net, (list, tuple)) and net and all(isinstance(c, nn.Cell) for c in net):
        hint = "wrap the cells in a container first, e.g. nn.SequentialCell(cells)"
    else:
        hint = "build your network (a subclass of mindspore.nn.Cell) and pass that object"
    raise NotACellError(f"{function}() expects a mindspore.nn.Cell as `{argument}`, got {got}: {hint}.")


def normalize_value(value: Any, where: str = "") -> Any:
    """One input value as construct() will get it (numpy arrays become Tensors), or an InputError."""
    if isinstance(value, (Tensor, *_SCALARS)):
        return value
    if isinstance(value, np.ndarray):
        return Tensor(value)
    if isinstance(value, (tuple, list)):
        return type(value)(normalize_value(v, f"{where}[{i}]") for i, v in enumerate(value))
    raise InputError(
        f"inputs{where} is a {type(value).__module__}.{type(value).__name__}; graphaudit passes "
        "`inputs` positionally to construct() and accepts mindspore.Tensor, numpy arrays, Python "
        "scalars, None, or tuples of these. Convert it, e.g. mindspore.Tensor(numpy_array)."
    )


def normalize_inputs(net: nn.Cell, inputs: Any) -> tuple[Any, ...]:
    """Turn *inputs* into the positional arguments of ``net.construct``, checking them."""
    if isinstance(inputs, dict):
        raise InputError(
            "inputs is a dict; graphaudit passes inputs positionally. Pass a tuple in the "
            "order of construct()'s parameters, e.g. inputs=(x, mask)."
        )
    args = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    args = tuple(normalize_value(v, f"[{i}]") for i, v in enumerate(args))
    try:
        signature = inspect.signature(net.construct)
    except (TypeError, ValueError):  # a construct without a Python signature
        return args
    try:
        signature.bind(*args)
    except TypeError as err:
        raise InputError(
            f"{type(net).__name__}.construct{signature} cannot take the {len(args)} input(s) "
            f"given ({describe_inputs(args)}): {err}. Pass one value per construct() parameter, "
            "as a tuple when there are several."
        ) from err
    return args


def describe_inputs(args: tuple[Any, ...]) -> str:
    """A short text like ``Tensor[1, 3, 224, 224] Float32, 0.5``."""
    parts = []
    for value in args:
        if isinstance(value, Tensor):
            parts.append(f"Tensor{list(value.shape)} {value.dtype}")
        elif isinstance(value, (tuple, list)):
            parts.append(f"({describe_inputs(tuple(value))})")
        else:
            parts.append(repr(value))
    return ", ".join(parts)
