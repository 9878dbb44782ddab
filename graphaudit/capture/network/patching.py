"""Temporary, exactly reversible wrapping of MindSpore's call entry points.

During a traced forward pass graphaudit needs to see every cell call and every operation
that runs between cells. MindSpore 2.x has no ``__torch_function__``-style hook for
operations, so (like MindSpore's own msprobe dumper) the entry points are wrapped:
``Cell.__call__``, the public functions of ``mindspore.ops`` / ``mindspore.mint`` and
their functional namespaces, the ``Tensor`` methods and operators, and every
``Primitive`` subclass's ``__call__``. The wrappers are installed for the duration of
one capture and removed afterwards, leaving the classes and modules as they were.
"""

from __future__ import annotations

import functools
import gc
import importlib
import inspect
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from mindspore import Parameter, Tensor, nn
from mindspore.ops import Primitive

__all__ = ["OpSite", "function_sites", "patched", "primitive_classes", "tensor_method_sites"]

_MISSING = object()

FUNCTIONAL_MODULES = (
    ("ops", "mindspore.ops"),
    ("ops.functional", "mindspore.ops.functional"),
    ("mint", "mindspore.mint"),
    ("mint.nn.functional", "mindspore.mint.nn.functional"),
)

# Tensor operators worth seeing in a data-flow graph. Comparisons used for control flow
# (``__eq__``/``__bool__``), conversions and container protocol methods are left alone.
TENSOR_OPERATORS = frozenset(
    f"__{name}__"
    for base in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor")
    for name in (base, f"r{base}", f"i{base}")
) | frozenset(
    {"__neg__", "__abs__", "__invert__", "__lt__", "__le__", "__gt__", "__ge__", "__getitem__", "__setitem__"}
)

# Public Tensor methods that are not tensor operations, or that graphaudit itself uses
# while tracing; wrapping them would only cost time.
TENSOR_METHODS_LEFT_ALONE = frozenset(
    {
        "asnumpy",
        "numpy",
        "item",
        "tolist",
        "size",
        "dim",
        "ndimension",
        "numel",
        "nelement",
        "element_size",
        "data_sync",
        "set_data",
        "init_data",
        "has_init",
        "assign_value",
        "register_hook",
        "storage",
        "untyped_storage",
        "data_ptr",
        "is_contiguous",
        "is_floating_point",
        "is_complex",
        "is_signed",
        "stride",
        "storage_offset",
        "set_const_arg",
        "is_persistent_data",
        "set_dtype",
        "to_coo",
        "to_csr",
        "value",
        "init_flag",
        "copy_",
        "detach",
        "requires_grad_",
        "retain_grad",
        "backward",
    }
)


@dataclass(frozen=True, slots=True)  # one per entry point, kept for the process: no __dict__ each
class OpSite:
    """One wrappable entry point: ``owner.name`` is ``original`` and is shown as ``label``."""

    owner: Any
    name: str
    original: Any
    label: str
    is_method: bool


def _is_plain_function(value: Any) -> bool:
    return isinstance(value, (types.FunctionType, types.BuiltinFunctionType)) or (
        callable(value)
        and type(value).__name__ in {"cython_function_or_method", "builtin_function_or_method"}
    )


@functools.cache
def function_sites() -> tuple[OpSite, ...]:
    """The public functions of MindSpore's functional namespaces (found once per process)."""
    sites = []
    for label_prefix, module_name in FUNCTIONAL_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # a namespace this MindSpore version does not have
            continue
        for name, value in vars(module).items():
            if name.startswith("_") or inspect.isclass(value) or inspect.ismodule(value):
                continue
            if _is_plain_function(value):
                sites.append(OpSite(module, name, value, f"{label_prefix}.{name}", False))
    return tuple(sites)


@functools.cache
def tensor_method_sites() -> tuple[OpSite, ...]:
    """Tensor and Parameter methods and operators (found once per process)."""
    sites = []
    for cls in (Tensor, Parameter):
        names = [n for n in dir(cls) if n in TENSOR_OPERATORS or not n.startswith("_")]
        for name in names:
            if name in TENSOR_METHODS_LEFT_ALONE:
                continue
            if cls is Parameter and name not in vars(Parameter):
                continue  # inherited from Tensor: wrapping Tensor covers it
            static = inspect.getattr_static(cls, name, None)
            if static is None or isinstance(static, (property, staticmethod, classmethod)):
                continue
            if not callable(static) or inspect.isclass(static):
                continue
            original = vars(cls).get(name, _MISSING)
            sites.append(OpSite(cls, name, original, f"Tensor.{name}", True))
    return tuple(sites)


@functools.cache
def primitive_classes() -> tuple[type, ...]:
    """Every loaded Primitive class that defines its own ``__call__``."""
    seen: dict[type, None] = {}
    stack = [Primitive]
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen[cls] = None
        stack.extend(cls.__subclasses__())
    return tuple(cls for cls in seen if "__call__" in vars(cls))


#: The wrappers made so far, by (maker, what it wraps, key): a wrapper reads the tracer of its
#: thread when called, so the same one serves every install. Made anew, the ~1,700 closures were
#: half of an install's cost (an audit installs the wrappers for each pass). The value keeps the
#: wrapped object, so that a reused id() is never mistaken for it.
_MADE: dict[tuple[Callable[..., Any], int, str], tuple[Any, Callable[..., Any]]] = {}


def _made(
    make: Callable[..., Callable[..., Any]], original: Any, *args: Any, key: str = ""
) -> Callable[..., Any]:
    """``make(*args)``, the wrapper of *original*, made once per process (per *key*, where one
    original is wrapped differently at different sites)."""
    index = (make, id(original), key)
    hit = _MADE.get(index)
    if hit is not None and hit[0] is original:
        return hit[1]
    wrapper = make(*args)
    _MADE[index] = (original, wrapper)
    return wrapper


def _cell_call_owners(cells: Iterator[nn.Cell]) -> list[type]:
    owners: dict[type, None] = {nn.Cell: None}
    for cell in cells:
        for cls in type(cell).__mro__:
            if cls is nn.Cell:
                break
            if "__call__" in vars(cls):
                owners[cls] = None
                break
    return list(owners)


@contextmanager
def patched(
    cells: Iterator[nn.Cell],
    wrap_cell_call: Callable[[Callable[..., Any]], Callable[..., Any]],
    wrap_op: Callable[[OpSite, Callable[..., Any]], Callable[..., Any]],
    wrap_primitive_call: Callable[[Callable[..., Any]], Callable[..., Any]],
) -> Iterator[None]:
    """Install the tracing wrappers, and remove every one of them on exit."""
    # What to put back, as three parallel lists: a tuple per entry point would cost 0.15 MiB more.
    owners: list[Any] = []
    names: list[str] = []
    originals: list[Any] = []

    def install(owner: Any, name: str, replacement: Any) -> None:
        owners.append(owner)
        names.append(name)
        originals.append(vars(owner).get(name, _MISSING))
        setattr(owner, name, replacement)

    # Each install allocates a closure; with a large network built, the allocations set off
    # full collections that rescan every cell and tensor (about 0.1 s for resnet50).
    paused = gc.isenabled()
    gc.disable()
    try:
        for cls in _cell_call_owners(cells):
            original = vars(cls)["__call__"]
            install(cls, "__call__", _made(wrap_cell_call, original, original))
        for site in function_sites():
            current = vars(site.owner).get(site.name)
            if current is not site.original:
                continue  # replaced by someone else since discovery: leave it alone
            # One wrapper per function, whatever namespaces export it (the first site's, in
            # discovery order): keyed on the function alone.
            install(site.owner, site.name, _made(wrap_op, site.original, site, site.original))
        for site in tensor_method_sites():
            original = getattr(site.owner, site.name)
            install(site.owner, site.name, _made(wrap_op, original, site, original, key=site.label))
        for cls in primitive_classes():
            original = vars(cls)["__call__"]
            install(cls, "__call__", _made(wrap_primitive_call, original, original))
        if paused:
            gc.enable()  # the traced pass itself runs as it would without graphaudit
        yield
    finally:
        gc.disable()
        for owner, name, original in zip(reversed(owners), reversed(names), reversed(originals)):
            if original is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, original)
        if paused:
            gc.enable()
