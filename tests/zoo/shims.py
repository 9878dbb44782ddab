"""Shims that let MindSpore's model zoos run on MindSpore 2.10 (CPU), applied only inside the zoo tests.

The zoos on PyPI were written for older MindSpore releases (mindyolo 0.5 and mindocr 0.5 for
2.2-2.3, mindone 0.5 for Ascend). Each shim below works around one MindSpore 2.10
incompatibility, and says which. None of them changes a model: parameters, their names and
the cells are the zoo's own; only a function the model calls is replaced by an equivalent
that runs here.

Every shim is a context manager that puts back what it replaced on exit (``with
shims.for_mindyolo(): ...``), so that nothing leaks into the other tests of the same
process. Before replacing a MindSpore function, graphaudit's discovery of the functions it
traces is run once (:func:`_prime_graphaudit`): graphaudit keeps the functions it found in a
per-process cache, and must find MindSpore's own ones, not a shim.
"""

from __future__ import annotations

import importlib
import math
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["Patches", "for_mindaudio", "for_mindocr", "for_mindone", "for_mindyolo", "import_mindocr"]

_MISSING = object()


class Patches:
    """``setattr`` calls that are undone, in reverse order, by :meth:`restore`."""

    def __init__(self) -> None:
        self._undo: list[tuple[Any, str, Any]] = []

    def set(self, owner: Any, name: str, value: Any) -> None:
        self._undo.append((owner, name, vars(owner).get(name, _MISSING)))
        setattr(owner, name, value)

    def restore(self) -> None:
        for owner, name, old in reversed(self._undo):
            if old is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, old)
        self._undo.clear()


@contextmanager
def _patches() -> Iterator[Patches]:
    _prime_graphaudit()
    patches = Patches()
    try:
        yield patches
    finally:
        patches.restore()


def _prime_graphaudit() -> None:
    """Let graphaudit discover MindSpore's functions before a shim replaces one of them."""
    from graphaudit.capture.network.patching import function_sites, primitive_classes, tensor_method_sites

    function_sites()
    tensor_method_sites()
    primitive_classes()


# -- mindyolo ----------------------------------------------------------------------------------


@contextmanager
def for_mindyolo() -> Iterator[None]:
    """``Tensor.max(dim)`` / ``Tensor.min(dim)`` with one positional int, as mindyolo's losses expect.

    MindSpore 2.10: ``Tensor.max(-2)`` follows PyTorch and returns a ``(values, indices)``
    tuple; mindyolo 0.5's YOLOv8 loss (``TaskAlignedAssigner``: ``(...).max(-2).expand_dims(-1)``)
    was written for the NumPy behaviour of MindSpore <= 2.3, values only. The call with one
    positional int is routed to ``axis=``, every other call is left as it is.
    """
    from mindspore import Tensor

    with _patches() as patches:
        for name in ("max", "min"):
            original = getattr(Tensor, name)

            def reduce(
                self: Tensor, *args: Any, _original: Callable[..., Any] = original, **kwargs: Any
            ) -> Any:
                if len(args) == 1 and isinstance(args[0], int) and not kwargs:
                    return _original(self, axis=args[0])
                return _original(self, *args, **kwargs)

            patches.set(Tensor, name, reduce)
        yield


# -- mindocr -----------------------------------------------------------------------------------


def _stub_module(name: str) -> types.ModuleType:
    module = types.ModuleType(name)

    class Removed:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            raise RuntimeError(f"{name} was removed in MindSpore 2.10 (a stub for mindocr's imports)")

    def __getattr__(attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        if attr.startswith("default_"):
            return None
        if attr[0].isupper() or attr.startswith("_L"):
            return type(attr, (Removed,), {})
        return lambda *a, **k: (lambda f: f) if attr.endswith("_check") else None

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    return module


def import_mindocr() -> types.ModuleType:
    """``import mindocr``, with a stub for ``mindspore.parallel._transformer`` during the import only.

    mindocr 0.5 imports ``mindspore.parallel._transformer.{layers,moe,op_parallel_config,
    transformer}`` at import time (for ABINet, which these tests do not build); MindSpore 2.10
    no longer has that package. The stub modules are in ``sys.modules`` only while mindocr is
    imported: what imported them keeps its references, nothing else sees them.
    """
    if "mindocr.models" in sys.modules:
        return sys.modules["mindocr"]
    import mindspore.parallel  # noqa: F401  (the stub's parent must exist)

    base = "mindspore.parallel._transformer"
    stubs = {base: _stub_module(base)}
    stubs[base].__path__ = []  # type: ignore[attr-defined]
    for sub in ("layers", "moe", "op_parallel_config", "transformer"):
        stubs[f"{base}.{sub}"] = _stub_module(f"{base}.{sub}")
        setattr(stubs[base], sub, stubs[f"{base}.{sub}"])
    saved = {name: sys.modules.get(name) for name in stubs}
    sys.modules.update(stubs)
    try:
        importlib.import_module("mindocr.models")
        importlib.import_module("mindocr.losses")
        importlib.import_module("mindocr.optim")
        importlib.import_module("mindocr.utils.model_wrapper")
        importlib.import_module("mindocr.utils.train_step_wrapper")
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    return sys.modules["mindocr"]


@contextmanager
def for_mindocr() -> Iterator[None]:
    """mindocr's optimizers advance ``global_step`` on MindSpore 2.10.

    mindocr 0.5's AdamW (and Lion, NAdam, Adan) do ``if version.__version__ >= "2.2":
    assignadd(global_step)``: a string comparison, False for ``"2.10.0"``, so on 2.10
    ``global_step`` never advances and a warm-up learning rate stays at its first value
    (0.0: the parameters never change). Those modules get a version string that compares as
    intended while the shim is active.
    """
    import_mindocr()
    with _patches() as patches:
        for name in ("adamw", "lion", "nadam", "adan"):
            module = importlib.import_module(f"mindocr.optim.{name}")
            patches.set(module, "version", types.SimpleNamespace(__version__="2.9.99"))
        yield


# -- mindaudio ---------------------------------------------------------------------------------


@contextmanager
def for_mindaudio() -> Iterator[None]:
    """Nothing for DeepSpeech2: it runs on MindSpore 2.10 CPU as the zoo ships it.

    (mindaudio's own ``TrainOneStepWithLossScaleCell``, used by its Conformer recipe, needs the
    NPU/GPU float-status operations, which have no CPU kernel; DeepSpeech2's recipe trains
    with MindSpore's ``nn.TrainOneStepCell`` and needs no shim.)
    """
    with _patches():
        yield


# -- mindone -----------------------------------------------------------------------------------


def _number(value: Any) -> Any:
    from mindspore import Tensor

    return value.item() if isinstance(value, Tensor) else value


@contextmanager
def for_mindone() -> Iterator[None]:
    """``mint`` functions without a CPU kernel in MindSpore 2.10, replaced by ``ops`` equivalents.

    mindone.transformers (written for Ascend) calls ``mindspore.mint`` functions whose CPU
    kernels MindSpore 2.10 does not have (Arange, FillScalar, FullLike, ZerosLikeExt, Addmm,
    Baddbmm, Outer, TrilExt, CumsumExt, Std, IndexSelect, ArgMaxExt, BitwiseOrTensor,
    RepeatInterleaveInt, Embedding, LayerNormExt, GeluExt, ConstantPadND, DropoutExt,
    LogSoftmaxExt/CrossEntropy, LinalgVectorNorm, InplaceFillScalar, Clone): each is replaced
    by a function of the same signature built from ``ops`` kernels that exist on CPU, and the
    ``construct`` of ``mint.nn.LayerNorm``/``Embedding``/``GELU``/``Dropout``/``CrossEntropyLoss``
    calls those. Parameters, their names and the cells are untouched.
    """
    import mindspore as ms
    import numpy as np
    from mindspore import Tensor, mint, ops
    from mindspore.ops import operations as P

    functional = mint.nn.functional
    with _patches() as patches:

        def arange(start: Any = 0, end: Any = None, step: Any = 1, *, dtype: Any = None) -> Tensor:
            start, end, step = _number(start), _number(end), _number(step)
            if end is None:
                start, end = 0, start
            if dtype is None:
                integral = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
                dtype = ms.int64 if integral else ms.float32
            return Tensor(np.arange(start, end, step), dtype)

        def full(size: Any, fill_value: Any, *, dtype: Any = None) -> Tensor:
            fill_value = _number(fill_value)
            if dtype is None:
                dtype = (
                    ms.bool_
                    if isinstance(fill_value, bool)
                    else ms.int64
                    if isinstance(fill_value, int)
                    else ms.float32
                )
            return ops.fill(dtype, (size,) if isinstance(size, int) else tuple(size), fill_value)

        def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
            out = ops.matmul(mat1, mat2)
            out = out if alpha == 1 else out * alpha
            return out if beta == 0 else out + (input if beta == 1 else input * beta)

        def baddbmm(
            input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1
        ) -> Tensor:
            out = ops.bmm(batch1, batch2)
            out = out if alpha == 1 else out * alpha
            return out if beta == 0 else out + (input if beta == 1 else input * beta)

        def repeat_interleave(
            input: Tensor, repeats: Any, dim: Any = None, *, output_size: Any = None
        ) -> Tensor:
            if dim is None:
                input, dim = input.reshape(-1), 0
            return ops.repeat_interleave(input, _number(repeats), dim)

        def layer_norm(
            input: Tensor, normalized_shape: Any, weight: Any = None, bias: Any = None, eps: float = 1e-5
        ) -> Tensor:
            shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
            weight = ops.ones(shape, input.dtype) if weight is None else weight
            bias = ops.zeros(shape, input.dtype) if bias is None else bias
            n = len(shape)
            return P.LayerNorm(begin_norm_axis=-n, begin_params_axis=-n, epsilon=eps)(input, weight, bias)[0]

        def gelu(input: Tensor, approximate: str = "none") -> Tensor:
            if approximate == "tanh":
                inner = math.sqrt(2.0 / math.pi) * (input + 0.044715 * ops.pow(input, 3.0))
                return 0.5 * input * (1.0 + ops.tanh(inner))
            return 0.5 * input * (1.0 + ops.erf(input / math.sqrt(2.0)))

        def pad(input: Tensor, pad: Any, mode: str = "constant", value: Any = None) -> Tensor:
            if mode == "constant":
                return ops.pad(input, tuple(pad), mode="constant", value=0.0 if value is None else value)
            return ops.pad(input, tuple(pad), mode=mode)

        def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
            return input if (not training or p == 0) else ops.dropout(input, p=p, training=True)

        def cross_entropy(
            input: Tensor,
            target: Tensor,
            weight: Any = None,
            ignore_index: int = -100,
            reduction: str = "mean",
            label_smoothing: float = 0.0,
        ) -> Tensor:
            if target.dtype == ms.int64:
                target = target.astype(ms.int32)
            return ops.cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing)

        def fill_(self: Tensor, value: Any, _original: Callable[..., Any] = Tensor.fill_) -> Tensor:
            try:
                return _original(self, value)
            except RuntimeError:
                self.assign_value(ops.full_like(self, _number(value)))
                return self

        for name, function in {
            "arange": arange,
            "full": full,
            "full_like": lambda input, fill_value, *, dtype=None: ops.full_like(
                input, _number(fill_value), dtype=dtype
            ),
            "zeros_like": lambda input, *, dtype=None: ops.zeros_like(input, dtype=dtype),
            "ones_like": lambda input, *, dtype=None: ops.ones_like(input, dtype=dtype),
            "addmm": addmm,
            "baddbmm": baddbmm,
            "outer": lambda input, vec2: input.reshape(-1, 1) * vec2.reshape(1, -1),
            "tril": lambda input, diagonal=0: ops.tril(input, diagonal),
            "triu": lambda input, diagonal=0: ops.triu(input, diagonal),
            "cumsum": lambda input, dim, dtype=None: ops.cumsum(input, axis=dim, dtype=dtype),
            "std": lambda input, dim=None, *, correction=1, keepdim=False: ops.std(
                input, axis=dim, ddof=correction, keepdims=keepdim
            ),
            "index_select": lambda input, dim, index: ops.gather(input, index, dim),
            "argmax": lambda input, dim=None, keepdim=False: ops.argmax(input, dim, keepdim),
            "bitwise_or": lambda input, other: ops.bitwise_or(input, other),
            "repeat_interleave": repeat_interleave,
        }.items():
            patches.set(mint, name, function)
        for name, function in {
            "embedding": lambda input, weight, *args, **kwargs: ops.gather(weight, input, 0),
            "layer_norm": layer_norm,
            "gelu": gelu,
            "pad": pad,
            "dropout": dropout,
            "log_softmax": lambda input, dim=None, *, dtype=None: ops.log_softmax(
                input if dtype is None else input.astype(dtype), -1 if dim is None else dim
            ),
            "cross_entropy": cross_entropy,
            "normalize": lambda input, p=2.0, dim=1, eps=1e-12: (
                input / ops.clamp(ops.norm(input, p, dim, keepdim=True), min=eps)
            ),
        }.items():
            patches.set(functional, name, function)
        constructs = {
            mint.nn.LayerNorm: lambda self, input: layer_norm(
                input, self.normalized_shape, self.weight, self.bias, self.eps
            ),
            mint.nn.Embedding: lambda self, input: ops.gather(self.weight, input, 0),
            mint.nn.GELU: lambda self, input: gelu(input, approximate=self.approximate),
            mint.nn.Dropout: lambda self, input: dropout(input, self.p, self.training),
            mint.nn.CrossEntropyLoss: lambda self, input, target: cross_entropy(
                input, target, self.weight, self.ignore_index, self.reduction, self.label_smoothing
            ),
        }
        for cls, construct in constructs.items():
            patches.set(cls, "construct", construct)
        patches.set(Tensor, "fill_", fill_)
        patches.set(Tensor, "clone", lambda self, *args, **kwargs: ops.deepcopy(self))
        yield
