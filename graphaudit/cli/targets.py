"""What the command line builds: ``MODULE:FACTORY`` references, and random input tensors.

Nothing here imports MindSpore at import time (``graphaudit --help`` stays light); the
functions that build or inspect networks import it when they run.

Example:
    >>> parse_tensor_spec("1x3x224x224:float16")
    ((1, 3, 224, 224), 'float16')
    >>> parse_tensor_spec("8")
    ((8,), 'float32')
"""

from __future__ import annotations

import argparse
import functools
import importlib
import importlib.util
import inspect
import os
import re
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from graphaudit.errors import CLIError, GraphAuditError

__all__ = [
    "DTYPES",
    "Target",
    "as_tuple",
    "call",
    "data_inputs",
    "is_network",
    "load_target",
    "make_tensor",
    "parse_tensor_spec",
    "random_tensors",
    "resolve_reference",
    "tensor_spec_arg",
    "unwrapped",
]

DTYPES = {
    "float16": "float16",
    "half": "float16",
    "float32": "float32",
    "float": "float32",
    "float64": "float64",
    "double": "float64",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int": "int32",
    "int64": "int64",
    "long": "int64",
    "uint8": "uint8",
    "bool": "bool",
}

_DIM = re.compile(r"^[1-9]\d*$")

TensorSpec = tuple[tuple[int, ...], str]


# --------------------------------------------------------------------------- tensors


def parse_tensor_spec(text: str) -> TensorSpec:
    """Parse ``SHAPE[:DTYPE]`` (``1x3x224x224:float32``; ``scalar`` for a 0-d tensor).

    Dimensions are positive integers separated by ``x`` (or ``,``); the dtype defaults to
    ``float32`` and is one of :data:`DTYPES`.

    Example:
        >>> parse_tensor_spec("2,10:int64")
        ((2, 10), 'int64')
        >>> parse_tensor_spec("scalar:bool")
        ((), 'bool')
        >>> parse_tensor_spec("1x0")
        Traceback (most recent call last):
        ...
        graphaudit.errors.CLIError: bad tensor shape '1x0': dimension '0' is not a positive integer (write e.g. 1x3x224x224:float32)
    """
    shape_text, _, dtype_text = text.strip().partition(":")
    dtype_text = dtype_text.strip().lower() or "float32"
    if dtype_text not in DTYPES:
        raise CLIError(
            f"bad tensor dtype {dtype_text!r} in {text!r}: use one of {', '.join(sorted(set(DTYPES.values())))}"
        )
    shape_text = shape_text.strip().lower()
    if shape_text in ("scalar", "()"):
        return (), DTYPES[dtype_text]
    if not shape_text:
        raise CLIError(f"bad tensor shape {text!r}: the shape is empty (write e.g. 1x3x224x224:float32)")
    dims = [d.strip() for d in re.split(r"[x,]", shape_text)]
    for dim in dims:
        if not _DIM.match(dim):
            raise CLIError(
                f"bad tensor shape {text!r}: dimension {dim!r} is not a positive integer "
                "(write e.g. 1x3x224x224:float32)"
            )
    return tuple(int(d) for d in dims), DTYPES[dtype_text]


def tensor_spec_arg(text: str) -> TensorSpec:
    """:func:`parse_tensor_spec` as an argparse ``type`` (a bad spec is a usage error)."""
    try:
        return parse_tensor_spec(text)
    except CLIError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def make_tensor(shape: tuple[int, ...], dtype: str, rng: Any) -> Any:
    """A deterministic random ``mindspore.Tensor``: floats uniform in [0, 1), integers 0 or 1.

    Example:
        >>> import numpy as np
        >>> t = make_tensor((2, 3), "int32", np.random.default_rng(0))
        >>> t.shape, str(t.dtype), set(t.asnumpy().ravel()) <= {0, 1}
        ((2, 3), 'Int32', True)
    """
    import numpy as np
    from mindspore import Tensor

    if dtype == "bool":
        array = rng.random(shape) < 0.5
    elif dtype.startswith(("int", "uint")):
        array = rng.integers(0, 2, size=shape).astype(dtype)
    else:
        array = rng.random(shape).astype(dtype)
    return Tensor(np.asarray(array))


def random_tensors(specs: Sequence[TensorSpec], seed: int) -> list[Any]:
    """One :func:`make_tensor` per spec, all drawn from one generator seeded with *seed*."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return [make_tensor(shape, dtype, rng) for shape, dtype in specs]


def as_tuple(inputs: Any) -> tuple[Any, ...]:
    return tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)


# --------------------------------------------------------------------------- factories


@dataclass
class Target:
    """What a ``MODULE:FACTORY`` built, and where that factory is defined.

    ``factory`` is the object ``MODULE:FACTORY`` names (the function, class or network);
    ``source_file`` and ``source_line`` where it is defined; ``options`` the other keywords
    of :func:`graphaudit.audit` a factory's dict gave (``mode``, ``label``, ``peers``...).
    """

    net: Any
    optimizer: Any = None
    loss_fn: Any = None
    inputs: Any = None
    spec: Any = None
    source_file: str | None = None
    source_line: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    factory: Any = field(default=None, repr=False)


def _target_keys() -> list[str]:
    """The keys a factory's dict may have: the parameters of :func:`graphaudit.audit` (and ``loss``)."""
    from graphaudit.runner import audit

    return [*inspect.signature(audit).parameters, "loss"]


def describe(err: BaseException) -> str:
    """``TypeName: message (at file:line)``, the line being the innermost frame."""
    text = f"{type(err).__name__}: {err}".rstrip(": ")
    frames = traceback.extract_tb(err.__traceback__)
    if frames:
        text += f" (at {frames[-1].filename}:{frames[-1].lineno})"
    return text


def _split_reference(reference: str, option: str) -> tuple[str, str]:
    module, sep, attr = reference.rpartition(":")
    if not sep or not module or not attr or "/" in attr or "\\" in attr:
        raise CLIError(
            f"{option} {reference!r} is not MODULE:FACTORY: write the module (an importable name "
            "like mypkg.models, or a path like models/net.py), a colon, and the name of the "
            "function or class that builds it, e.g. models/net.py:build"
        )
    return module, attr


def _import_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise CLIError(f"no such Python file: {path}")
    name = "_graphaudit_target_" + re.sub(r"\W", "_", str(path.resolve().with_suffix("")))
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CLIError(f"cannot import {path}: not a Python source file")
    module = importlib.util.module_from_spec(spec)
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # so the file can import its neighbours, as `python file.py` would
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as err:
        del sys.modules[name]
        if isinstance(err, (KeyboardInterrupt, SystemExit)):
            raise
        raise CLIError(f"importing {path} raised {describe(err)}") from err
    return module


def _import_module(name: str) -> ModuleType:
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # `graphaudit audit pkg.mod:f` finds pkg in the current folder
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name and (name == err.name or name.startswith(err.name + ".")):
            raise CLIError(
                f"cannot import module {name!r}: {err}. Give a path to a .py file (models/net.py) or run "
                "graphaudit from the folder that holds the package."
            ) from err
        raise CLIError(f"importing {name} raised {describe(err)}") from err
    except Exception as err:
        raise CLIError(f"importing {name} raised {describe(err)}") from err


def _looks_like_path(module: str) -> bool:
    return module.endswith(".py") or "/" in module or "\\" in module or os.sep in module


def resolve_reference(reference: str, option: str = "MODULE:FACTORY") -> tuple[Any, ModuleType]:
    """The object named by ``MODULE:ATTR`` (``ATTR`` may be dotted), and its module."""
    module_text, attr = _split_reference(reference, option)
    module = _import_file(Path(module_text)) if _looks_like_path(module_text) else _import_module(module_text)
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            defined = sorted(
                n
                for n, v in vars(module).items()
                if not n.startswith("_") and callable(v) and getattr(v, "__module__", None) == module.__name__
            )
            hint = f"; it defines {', '.join(defined)}" if defined else ""
            raise CLIError(f"{module_text} has no attribute {attr!r}{hint}") from None
    return obj, module


def call(obj: Any, args: tuple[Any, ...], what: str) -> Any:
    """``obj(*args)``; a factory that cannot take *args*, or raises, is a :class:`CLIError`."""
    try:
        inspect.signature(obj).bind(*args)
    except TypeError as err:
        raise CLIError(
            f"{what} cannot be called with {len(args)} argument(s): {err}. "
            + (
                "A factory takes no arguments (give defaults to any it has)."
                if not args
                else "An optimizer factory takes the network as its only argument."
            )
        ) from err
    except ValueError:  # no signature (a builtin): just try
        pass
    try:
        return obj(*args)
    except GraphAuditError:
        raise
    except Exception as err:
        raise CLIError(f"calling {what} raised {describe(err)}") from err


def is_factory(obj: Any) -> bool:
    """Whether *obj* is something to call (a class, a function, a method, a ``partial``), not a value."""
    return isinstance(obj, (type, functools.partial)) or inspect.isroutine(obj)


def build_reference(reference: str, option: str) -> Any:
    """The value a ``MODULE:FACTORY`` option names: the object, or what calling it returns.

    Classes and functions are called with no arguments, as the network factory is; any
    other object is used as it is.
    """
    obj, _ = resolve_reference(reference, option)
    return call(obj, (), f"{option} {reference}") if is_factory(obj) else obj


def is_network(obj: Any) -> bool:
    """Whether *obj* is a ``nn.Cell`` or a ``mindspore.train.Model``."""
    from mindspore import nn

    return isinstance(obj, nn.Cell) or (type(obj).__name__ == "Model" and hasattr(obj, "_network"))


def _source_of(obj: Any, module: ModuleType) -> tuple[str | None, int | None]:
    for candidate in (obj, type(obj)):
        try:
            file = inspect.getsourcefile(candidate)
            line = inspect.getsourcelines(candidate)[1]
        except (OSError, TypeError):
            continue
        if file and os.path.exists(file):
            return file, max(line, 1)
    file = getattr(module, "__file__", None)
    return file, None


def load_target(reference: str) -> Target:
    """Import ``MODULE:FACTORY`` and build what it returns.

    ``FACTORY`` is a network (a ``nn.Cell`` object, or a ``Model``), a class or function
    called with no arguments that returns one, or returns ``(net, optimizer[, loss_fn])`` or a
    dict with the key ``net`` and any other argument of :func:`graphaudit.audit` (``optimizer``,
    ``loss_fn``, ``inputs``, ``label``, ``spec``, ``mode``, ``peers``...).
    """
    target = _build_target(reference)
    got = target.net
    if isinstance(got, type):
        raise CLIError(
            f"{reference} gave the class {got.__name__}, not a network: return an instance, {got.__name__}(...)"
        )
    if not is_network(got):
        raise CLIError(
            f"{reference} gave an object of type {type(got).__name__}, not a network: expected a "
            "mindspore.nn.Cell (or a WithLossCell, TrainOneStepCell or Model), or a class or function "
            "that returns one"
        )
    return target


def _build_target(reference: str) -> Target:
    obj, module = resolve_reference(reference)
    source_file, source_line = _source_of(obj, module)
    built = obj if is_network(obj) or not callable(obj) else call(obj, (), reference)
    where = {"source_file": source_file, "source_line": source_line, "factory": obj}
    if isinstance(built, dict):
        allowed = _target_keys()
        unknown = sorted(set(built) - set(allowed))
        if unknown or "net" not in built:
            problem = f"unknown keys {unknown}" if unknown else "no 'net' key"
            raise CLIError(
                f"{reference} returned a dict with {problem}; the keys allowed are 'net' (required) and "
                f"{', '.join(repr(k) for k in allowed if k != 'net')}: the arguments of graphaudit.audit()"
            )
        known = {"net", "optimizer", "loss_fn", "loss", "inputs", "spec"}
        return Target(
            built["net"],
            built.get("optimizer"),
            built.get("loss_fn", built.get("loss")),
            built.get("inputs"),
            built.get("spec"),
            options={k: v for k, v in built.items() if k not in known},
            **where,
        )
    if isinstance(built, (tuple, list)):
        if not 1 <= len(built) <= 3:
            raise CLIError(
                f"{reference} returned a {type(built).__name__} of {len(built)} values; return the network, "
                "(net, optimizer), (net, optimizer, loss_fn) or a dict {'net': ..., 'optimizer': ...}"
            )
        net, optimizer, loss_fn = (*built, None, None)[:3]
        return Target(net, optimizer, loss_fn, **where)
    return Target(built, **where)


def unwrapped(target: Target) -> Any:
    """The backbone, optimizer and loss inside the target's wrapper (a ``TrainingSetup``)."""
    from graphaudit.capture.training.unwrap import unwrap

    return unwrap(target.net, target.optimizer, target.loss_fn)


def data_inputs(specs: Sequence[TensorSpec], seed: int, target: Target) -> Any:
    """The inputs of the backbone's forward pass (no label), for ``render`` and ``spec snapshot``."""
    if specs:
        return tuple(random_tensors(specs, seed))
    if target.inputs is None:
        return None
    ends_with_label = unwrapped(target).takes_label and "label" not in target.options
    return as_tuple(target.inputs)[:-1] if ends_with_label else target.inputs
