"""Read the values of a tensor or parameter into NumPy, without changing anything.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor
    >>> import mindspore as ms
    >>> tensor_values(Tensor(np.ones(2), ms.bfloat16)).dtype
    dtype('float32')
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Tensor

__all__ = ["is_initialized", "same_bits", "tensor_values", "uninitialized"]


def tensor_values(tensor: Tensor) -> np.ndarray:
    """*tensor*'s values as a NumPy array (bfloat16, which NumPy lacks, widened exactly to float32).

    The array may share memory with the tensor: copy it before anything writes the tensor.
    """
    if tensor.dtype == ms.bfloat16:
        return tensor.astype(ms.float32).asnumpy()
    return tensor.asnumpy()


def scalar(value: Any) -> float | None:
    """*value* (a one-value tensor, array or number) as a float; ``None`` for anything else.

    Example:
        >>> from mindspore import Tensor
        >>> scalar(Tensor([1024.0])), scalar(2.0), scalar(Tensor([1.0, 2.0])), scalar("x")
        (1024.0, 2.0, None, None)
    """
    values = np.asarray(tensor_values(value) if isinstance(value, Tensor) else value)
    if values.size != 1 or not np.issubdtype(values.dtype, np.number):
        return None
    return float(values.reshape(()))


_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
#: Up to this size two copies compare faster than ``np.array_equal``'s setup (~6 us): 0.5 us
#: for BatchNorm's 2,048 statistics, which every restore of resnet50 compares 212 times.
_SMALL_BYTES = 32 * 1024


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether *a* and *b* hold the same bytes (NaN equals itself, ``-0.0`` differs from ``0.0``).

    Large arrays are compared as unsigned integers of the item's width, without the two
    copies that ``a.tobytes() == b.tobytes()`` makes (the probe and the restore compare every
    parameter of the network this way, several times); small ones as those copies, which cost
    less than ``np.array_equal``'s setup.

    Example:
        >>> import numpy as np
        >>> same_bits(np.array([np.nan, 0.0]), np.array([np.nan, 0.0])), same_bits(np.zeros(1), -np.zeros(1))
        (True, False)
    """
    if a.dtype != b.dtype or a.shape != b.shape or a.nbytes <= _SMALL_BYTES:
        return a.tobytes() == b.tobytes()
    unsigned = _UNSIGNED.get(a.dtype.itemsize)
    if unsigned is None or not (a.flags.c_contiguous and b.flags.c_contiguous) or a.dtype.hasobject:
        return a.tobytes() == b.tobytes()
    return bool(np.array_equal(a.reshape(-1).view(unsigned), b.reshape(-1).view(unsigned)))


def is_initialized(param: Tensor) -> bool:
    """Whether *param*'s values exist: not a lazily initialised parameter whose data is still to be made.

    Reading such a parameter (``no_init_parameters()``, ``init="..."`` with lazy init)
    would initialise it, so graphaudit never does.
    """
    return not getattr(param, "has_init", False)


def uninitialized(named: Iterable[tuple[str, Any]], owner: str) -> str | None:
    """The parameters of *named* (``(name, parameter)`` pairs of *owner*) whose values do not exist
    yet, told in words (``"3 parameters of Net (fc.weight, fc.bias, head.weight)"``), else ``None``.

    Example:
        >>> from mindspore import nn
        >>> with nn.utils.no_init_parameters():
        ...     lazy = nn.Dense(3, 2)
        >>> uninitialized(lazy.parameters_and_names(), "Dense"), uninitialized(nn.Dense(3, 2).parameters_and_names(), "Dense")
        ('2 parameters of Dense (weight, bias)', None)
    """
    lazy = [name for name, param in named if not is_initialized(param)]
    if not lazy:
        return None
    shown = ", ".join(lazy[:3]) + (f" and {len(lazy) - 3} more" if len(lazy) > 3 else "")
    return f"{len(lazy)} parameters of {owner} ({shown})"
