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
import operator
import types
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from mindspore import Parameter, Tensor, nn
from mindspore.ops import Primitive

__all__ = [
    "OpSite",
    "cell_call_owners",
    "function_sites",
    "patched",
    "primitive_classes",
    "tensor_method_sites",
]

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


#: One entry point of the process-wide plan: ``(owner, name, found, wrapper, rewrap)``. ``found`` is
#: what ``vars(owner)`` held under *name* when the plan was made; while it still holds it,
#: *wrapper* is installed as planned. Otherwise ``rewrap(current)`` makes the wrapper of what is
#: there now, or, ``None`` (a function someone else replaced since), the entry is left alone.
_PlanEntry = tuple[Any, str, Any, Callable[..., Any], "Callable[[Any], Callable[..., Any]] | None"]


@dataclass(frozen=True)
class _NamespacePlan:
    """The functions of one module's namespace, wrapped or put back with one ``dict.update`` each.

    ~1,700 of an install's ~3,400 entry points are module functions: set one by one they cost
    ~1 us each, twice an audit, and as many entries in the lists of what to put back.
    """

    namespace: dict[str, Any]
    names: tuple[str, ...]
    found: tuple[Any, ...]
    wrappers: dict[str, Any]
    originals: dict[str, Any]
    entries: tuple[_PlanEntry, ...]  # the same, one by one: for a namespace someone changed since

    def unchanged(self) -> bool:
        """Whether every function is still the one found when the plan was made."""
        return all(map(operator.is_, map(self.namespace.get, self.names), self.found))


@dataclass(frozen=True)
class _Plan:
    namespaces: tuple[_NamespacePlan, ...]
    classes: tuple[_PlanEntry, ...]  # the Tensor methods and the primitives' __call__, one by one


# Per (wrap_op, wrap_primitive_call): what an install sets, decided once per process.
_PLANS: dict[tuple[Callable[..., Any], Callable[..., Any]], _Plan] = {}


def _process_wide_plan(
    wrap_op: Callable[[OpSite, Callable[..., Any]], Callable[..., Any]],
    wrap_primitive_call: Callable[[Callable[..., Any]], Callable[..., Any]],
) -> _Plan:
    """Every functional, tensor-method and primitive entry point with its wrapper, made once.

    An install walks ~3,400 entry points; deciding each one's wrapper anew (finding the site's
    current value, the wrapper's cache key) cost ~3x the ``setattr`` itself, twice an audit.
    """
    key = (wrap_op, wrap_primitive_call)
    plan = _PLANS.get(key)
    if plan is not None:
        return plan
    functions: list[_PlanEntry] = []
    for site in function_sites():
        # One wrapper per function, whatever namespaces export it (the first site's, in
        # discovery order): keyed on the function alone.
        wrapper = _made(wrap_op, site.original, site, site.original)
        functions.append((site.owner, site.name, site.original, wrapper, None))
    classes: list[_PlanEntry] = []
    for site in tensor_method_sites():

        def rewrap_method(current: Any, site: OpSite = site) -> Callable[..., Any]:
            original = getattr(site.owner, site.name)  # inherited when the class holds none
            return _made(wrap_op, original, site, original, key=site.label)

        found = vars(site.owner).get(site.name, _MISSING)
        classes.append((site.owner, site.name, found, rewrap_method(found), rewrap_method))
    for cls in primitive_classes():

        def rewrap_call(current: Any) -> Callable[..., Any]:
            return _made(wrap_primitive_call, current, current)

        original = vars(cls)["__call__"]
        classes.append((cls, "__call__", original, rewrap_call(original), rewrap_call))
    by_module: dict[int, list[_PlanEntry]] = {}
    for entry in functions:
        by_module.setdefault(id(entry[0]), []).append(entry)
    namespaces = tuple(
        _NamespacePlan(
            vars(group[0][0]),
            tuple(name for _, name, _, _, _ in group),
            tuple(found for _, _, found, _, _ in group),
            {name: wrapper for _, name, _, wrapper, _ in reversed(group)},  # the first site's, as one by one
            {name: found for _, name, found, _, _ in group},
            tuple(group),
        )
        for group in by_module.values()
    )
    plan = _PLANS[key] = _Plan(namespaces, tuple(classes))
    return plan


def cell_call_owners(cells: Iterable[nn.Cell]) -> list[type]:
    """``nn.Cell`` and the classes of *cells* that define their own ``__call__``: what a cell call runs."""
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
    call_owners: Iterable[type],
    wrap_cell_call: Callable[[Callable[..., Any]], Callable[..., Any]],
    wrap_op: Callable[[OpSite, Callable[..., Any]], Callable[..., Any]],
    wrap_primitive_call: Callable[[Callable[..., Any]], Callable[..., Any]],
    *,
    process_wide: bool = True,
) -> Iterator[None]:
    """Install the tracing wrappers, and remove every one of them on exit.

    *call_owners*: the classes whose ``__call__`` the cells call (:func:`cell_call_owners`).
    *process_wide*: also the functional, tensor-method and primitive entry points (``False``
    adds only *call_owners*' calls to a session that installed those already).
    """
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
    bulk: list[_NamespacePlan] = []  # put back with one dict.update each
    paused = gc.isenabled()
    gc.disable()
    try:
        for cls in call_owners:
            original = vars(cls)["__call__"]
            install(cls, "__call__", _made(wrap_cell_call, original, original))
        plan = _process_wide_plan(wrap_op, wrap_primitive_call) if process_wide else _Plan((), ())
        one_by_one: list[_PlanEntry] = []
        for namespace in plan.namespaces:
            if namespace.unchanged():
                namespace.namespace.update(namespace.wrappers)
                bulk.append(namespace)
            else:
                one_by_one.extend(namespace.entries)
        for owner, name, found, wrapper, rewrap in (*one_by_one, *plan.classes):
            current = vars(owner).get(name, _MISSING)
            if current is not found:
                if rewrap is None:
                    continue  # a function replaced by someone else since discovery: left alone
                wrapper = rewrap(current)
            owners.append(owner)
            names.append(name)
            originals.append(current)
            setattr(owner, name, wrapper)
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
        for namespace in bulk:
            namespace.namespace.update(namespace.originals)
        if paused:
            gc.enable()
