"""The original a port was made from, read as evidence: its weights, and how they are tied.

:func:`read_reference` takes what ``reference=`` is given: a ``.safetensors`` file, a PyTorch
state dict (``.pth``/``.pt``/``.bin``, read without torch and without running its pickle:
:mod:`.torch_pickle`), a folder :func:`graphaudit.reference.dump` wrote (:mod:`.dump_folder`), an
msprobe dump (``dump.json``: :mod:`.msprobe_dump`), an ONNX file (its initializers; needs the ``onnx`` package), or a dict
``name -> array`` (a state dict already in memory: NumPy arrays, torch tensors, MindSpore
Parameters). :mod:`.mapping` matches its names with the port's parameters.

Example:
    >>> import numpy as np
    >>> ref = read_reference({"fc.weight": np.zeros((3, 2), np.float32)})
    >>> ref.format, list(ref.tensors), ref.ordered
    ('arrays', ['fc.weight'], True)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from graphaudit.errors import ArgumentError, ArgumentTypeError

if TYPE_CHECKING:
    from graphaudit.capture.reference.dump_folder import Activations
    from graphaudit.capture.reference.msprobe_dump import MsprobeActivations

__all__ = ["Reference", "read_reference"]

_TORCH_SUFFIXES = (".pth", ".pt", ".bin", ".ckpt", ".tar")


@dataclass(frozen=True)
class Reference:
    """The original's weights: ``tensors`` (name -> array) and the groups of names tied together.

    ``ordered`` says whether ``tensors`` follow the original's module order (a state dict, an
    ONNX file) or not (a ``.safetensors`` file sorts them by dtype and name): the mapping's
    fallback by order uses it. ``matmul_right``: names whose array is stored ``(in, out)``.
    """

    source: str
    format: str
    tensors: dict[str, np.ndarray]
    ties: tuple[tuple[str, ...], ...] = ()
    ordered: bool = True
    matmul_right: frozenset[str] = field(default_factory=frozenset)
    activations: Activations | MsprobeActivations | None = None  # each module's outputs on one batch
    operations: frozenset[str] = field(default_factory=frozenset)  # an ONNX graph's op types


def read_reference(value: Any) -> Reference:
    """*value* (a file path or a dict of arrays) read as a :class:`Reference`."""
    if isinstance(value, Reference):
        return value
    if isinstance(value, Mapping):
        arrays = _arrays(value)
        return Reference("the dict given", "arrays", arrays, _same_objects(value))
    if not isinstance(value, (str, os.PathLike)):
        raise ArgumentTypeError(
            "reference= takes the original's weights: a .safetensors, .pth/.bin or .onnx file, or a dict "
            f"name -> array; got {type(value).__name__}"
        )
    path = os.fspath(value)
    from graphaudit.capture.reference.msprobe_dump import is_msprobe_dump, read_msprobe

    if is_msprobe_dump(path):
        d = read_msprobe(path, _weights_of)
        return Reference(d.source, d.format, d.tensors, d.ties, ordered=d.ordered, activations=d.activations)
    if os.path.isdir(path):
        from graphaudit.capture.reference.dump_folder import is_dump_folder, read_dump_folder

        if not is_dump_folder(path):
            raise ArgumentError(
                f"reference= {path!r} is a folder without the manifest.json graphaudit.reference.dump writes "
                "nor msprobe's dump.json: pass the original's weights file, or dump the original with python -m "
                "graphaudit.reference (or msprobe's PrecisionDebugger, level L0, task tensor)."
            )
        tensors, ties, activations = read_dump_folder(path)
        return Reference(path, "dump", tensors, ties, ordered=False, activations=activations)
    if not os.path.isfile(path):
        raise ArgumentError(
            f"reference= {path!r} is not a file: pass the original's weights (.safetensors, .pth, .bin "
            "or .onnx)."
        )
    lower = path.lower()
    if lower.endswith(".safetensors"):
        from graphaudit.capture.reference.safetensors_file import read_safetensors

        return Reference(path, "safetensors", read_safetensors(path), ordered=False)
    if lower.endswith(".onnx"):
        from graphaudit.capture.reference.onnx_file import read_onnx_weights

        tensors, right, operations = read_onnx_weights(path)
        return Reference(path, "onnx", tensors, matmul_right=right, operations=operations)
    if lower.endswith(_TORCH_SUFFIXES):
        from graphaudit.capture.reference.torch_pickle import read_torch_state

        state = read_torch_state(path)
        return Reference(path, "pytorch", state.tensors, state.ties)
    raise ArgumentError(
        f"reference= {path!r}: graphaudit reads .safetensors, .pth/.pt/.bin (a torch.save state dict) "
        "and .onnx files; name the file by what it holds."
    )


def _weights_of(path: str) -> tuple[dict[str, np.ndarray], tuple[tuple[str, ...], ...]]:
    """The weights and ties of the state dict file at *path* (one lying beside an msprobe dump)."""
    weights = read_reference(path)
    return weights.tensors, weights.ties


def _same_objects(value: Mapping[str, Any]) -> tuple[tuple[str, ...], ...]:
    """Names given one and the same tensor object: a state dict's tied weights."""
    groups: dict[int, list[str]] = {}
    for name, tensor in value.items():
        groups.setdefault(id(tensor), []).append(name)
    return tuple(tuple(names) for names in groups.values() if len(names) > 1)


def _arrays(value: Mapping[Any, Any]) -> dict[str, np.ndarray]:
    arrays = {}
    for name, tensor in value.items():
        if not isinstance(name, str):
            raise ArgumentTypeError(f"reference= as a dict takes name -> array, got a key {name!r}")
        try:
            array = tensor.asnumpy() if hasattr(tensor, "asnumpy") else np.asarray(tensor.detach().cpu())
        except AttributeError:
            array = np.asarray(tensor)
        if not (np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_):
            raise ArgumentTypeError(
                f"reference= as a dict takes name -> array, got {name!r}: {type(tensor).__name__}"
            )
        arrays[name] = array
    return arrays
