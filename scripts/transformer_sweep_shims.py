"""CPU kernels MindSpore 2.10 lacks that the encoder-decoders of ``transformer_sweep.py`` call.

The script's ``sweep_shims`` applies :func:`more_shims` with its own; like those, each computes
the same value another way and never changes the graph, and is active only inside the sweep
and the tests.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def logsumexp(input: Any, dim: Any, keepdim: bool = False) -> Any:
    """``mint.logsumexp`` (no CPU kernel): the largest value plus the log of the sum of the rest's exponentials."""
    from mindspore import ops

    top = ops.stop_gradient(input.max(axis=dim, keepdims=True))
    out = ops.log(ops.exp(input - top).sum(axis=dim, keepdims=True)) + top
    return out if keepdim else out.squeeze(dim)


def column_unfold(
    unfold: Any, input: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
) -> Any:
    """``mint.nn.functional.unfold`` (Im2ColExt) of ``(N, C, L, 1)`` with a ``(k, 1)`` kernel: strided slices.

    Anything else goes to *unfold* (the kernel itself). Block ``j`` of the output is
    ``input[:, :, j*s : j*s + k, 0]`` flattened channel-major, as Im2Col lays it out.
    """
    from mindspore import ops

    k, width = (kernel_size, 1) if isinstance(kernel_size, int) else tuple(kernel_size)
    s = int(stride if isinstance(stride, int) else next(iter(stride)))
    if width != 1 or input.shape[-1] != 1 or dilation not in (1, (1, 1)) or padding not in (0, (0, 0)):
        return unfold(input, kernel_size, dilation, padding, stride)
    n, c, length = input.shape[0], input.shape[1], input.shape[2]
    blocks = [input[:, :, j * s : j * s + k, 0].reshape(n, c * k) for j in range((length - k) // s + 1)]
    return ops.stack(blocks, axis=-1)


def filled_diagonal(values: Any, value: float, wrap: bool) -> Any:
    """A copy of the NumPy array *values* with its main diagonal set to *value* (``Tensor.fill_diagonal_``)."""
    import numpy as np

    values = values.copy()
    np.fill_diagonal(values, value, wrap=wrap)
    return values


def more_shims(patches: Any, inplace: Any) -> None:
    """CPU kernels MindSpore 2.10 lacks that these kinds call, replaced as the script's ``sweep_shims`` does.

    Each computes the same value another way and never changes the graph. *inplace* is
    ``sweep_shims``' writer of an in-place Tensor method (its name, a NumPy computation).
    """
    from mindspore import Tensor, mint, ops
    from zoo.shims import _number

    # the encoder-decoders' shift_tokens_right: labels' -100 made padding (InplaceMaskedFillScalar)
    inplace("masked_fill_", lambda t, mask, value: np.where(mask.asnumpy(), _number(value), t.asnumpy()))

    # ProphetNet's n-gram attention bias (no CPU kernel for the in-place fill of a diagonal). It
    # fills a view (`right_block[stream_idx]`): written by setitem, which writes through a view
    # (assign_value would replace the view's data and leave the mask unmasked: a false GA341)
    def fill_diagonal_(self: Tensor, value: Any, wrap: bool = False) -> Tensor:
        self[:] = Tensor(filled_diagonal(self.asnumpy(), _number(value), wrap), self.dtype)
        return self

    patches.set(Tensor, "fill_diagonal_", fill_diagonal_)
    # ProphetNet's torch-style Tensor.repeat(1, heads, 1, 1) (no CPU kernel): the same tiling
    patches.set(Tensor, "repeat", lambda self, *sizes: ops.tile(self, tuple(int(_number(s)) for s in sizes)))
    # Switch Transformers' router z-loss (LogSumExp): max + log(sum(exp(x - max)))
    patches.set(mint, "logsumexp", logsumexp)
    # mint.nn.GELU (GeluExt; IBert, Longformer): the functional gelu, which has a CPU kernel
    patches.set(
        mint.nn.GELU,
        "construct",
        lambda self, input: mint.nn.functional.gelu(input, approximate=getattr(self, "approximate", "none")),
    )
    # LED's overlapping chunks (Im2ColExt): mint's unfold of a one-pixel-wide image as slices
    unfold = mint.nn.functional.unfold
    patches.set(
        mint.functional,
        "unfold",
        lambda input, *args, **kwargs: column_unfold(unfold, input, *args, **kwargs),
    )
