"""Read the values of a tensor or parameter into NumPy, without changing anything.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor
    >>> import mindspore as ms
    >>> tensor_values(Tensor(np.ones(2), ms.bfloat16)).dtype
    dtype('float32')
"""

from __future__ import annotations

import mindspore as ms
import numpy as np
from mindspore import Tensor

__all__ = ["is_initialized", "tensor_values"]


def tensor_values(tensor: Tensor) -> np.ndarray:
    """*tensor*'s values as a NumPy array (bfloat16, which NumPy lacks, widened exactly to float32).

    The array may share memory with the tensor: copy it before anything writes the tensor.
    """
    if tensor.dtype == ms.bfloat16:
        return tensor.astype(ms.float32).asnumpy()
    return tensor.asnumpy()


def is_initialized(param: Tensor) -> bool:
    """Whether *param*'s values exist: not a lazily initialised parameter whose data is still to be made.

    Reading such a parameter (``no_init_parameters()``, ``init="..."`` with lazy init)
    would initialise it, so graphaudit never does.
    """
    return not getattr(param, "has_init", False)
