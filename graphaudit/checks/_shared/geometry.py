"""The spatial geometry of the convolutions of a traced pass (shared by GA312, GA313, GA314).

For every call of a (non-transposed) convolution: the spatial size of its input and output,
its dilated kernel, and whether it runs on a map that is 1 everywhere (``1x1``, a squeezed
feature vector). A convolution with a kernel larger than 1 on such a map only ever uses its
centre tap.

Example:
    >>> conv_maps([]), size_text((3, 3))
    ([], '3x3')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from graphaudit.checks._shared.layers import Layer, weight_layers

if TYPE_CHECKING:
    from graphaudit.checks.context import AuditContext

__all__ = ["ConvMap", "conv_maps", "convolutions", "size_text"]


def size_text(dims: tuple[int, ...]) -> str:
    """Spatial dims as a finding writes them: ``3x3``, ``16x16``."""
    return "x".join(str(d) for d in dims)


@dataclass(frozen=True)
class ConvMap:
    """One convolution call and the spatial sizes it saw."""

    layer: Layer
    size: tuple[int, ...]  # the input's spatial dims
    out: tuple[int, ...]  # the output's spatial dims
    kernel: tuple[int, ...]  # dilated kernel, per spatial dim

    @property
    def on_point(self) -> bool:
        """The input is 1 in every spatial dim."""
        return bool(self.size) and all(n == 1 for n in self.size)

    @property
    def spatial_kernel(self) -> bool:
        """The kernel spans more than one position in some dim."""
        return any(k > 1 for k in self.kernel)

    def shown(self, dims: tuple[int, ...]) -> str:
        return size_text(dims)


def conv_maps(layers: list[Layer]) -> list[ConvMap]:
    """The :class:`ConvMap` of every non-transposed convolution of *layers* whose shapes are known."""
    found = []
    for layer in layers:
        if layer.kind != "conv" or layer.transposed:
            continue
        size, out = layer.spatial(layer.in_shape), layer.spatial(layer.out_shape)
        if not size or not out:
            continue
        kernel = layer.kernel
        if len(kernel) != len(size):
            continue
        found.append(ConvMap(layer, size, out, kernel))
    return found


def _convolutions(ctx: AuditContext) -> list[ConvMap]:
    return conv_maps(weight_layers(ctx))


def convolutions(ctx: AuditContext) -> list[ConvMap]:
    """The convolutions of the audit's traced pass, in call order (computed once per audit)."""
    return ctx.shared(_convolutions)
