"""Dump what a PyTorch original computes, for ``audit(port, inputs=x, reference=folder)``.

Run where the original lives (only torch and NumPy are needed there, not MindSpore)::

    python -m graphaudit.reference models/original.py:build --inputs batch.npz --out ref/

or from Python, ``graphaudit.reference.dump(model, (x,), "ref/")``. The model runs once, in
``eval()`` mode and without gradients, on the batch; forward hooks on every module record
each call's tensor inputs and outputs in the order the calls return. The folder holds:

- ``manifest.json``: the format's version, the model's class, torch's version, the inputs'
  shapes and dtypes, the modules in the order their calls returned, the tied weights;
- ``weights.safetensors``: the state dict (a tied weight stored once, its other names in the
  manifest's ``ties``);
- with ``--weights-only`` (``activations=False``), no batch is run: the weights and the
  attributes only, for the structure and attribute checks;
- ``manifest.json``'s ``modules``: each module's class and the attributes that decide what it
  computes (``eps``, ``momentum``, GELU's ``approximate``, Dropout's ``p``, a conv's or pool's
  ``padding``, ``ceil_mode``, ``count_include_pad``...: :data:`ATTRIBUTES`), compared with the
  port's cells by GA635-GA639;
- ``inputs.npz``: the batch, ``"0"``, ``"1"``... (so an audit of another batch is refused);
- ``activations.npz``: ``<module path>#<call>/<output|input>.<index>`` -> float32 array; the
  model itself is the path ``""``.

Each array is written as it is recorded (the zip is streamed), so the dump costs one forward
pass and one layer's activations of memory at a time beyond what torch keeps.

Example:
    >>> activation_key("encoder.layer.0", 0, "output", 1)
    'encoder.layer.0#0/output.1'
    >>> parse_activation_key("#2/input.0")
    ('', 2, 'input', 0)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import struct
import sys
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "ACTIVATIONS",
    "ATTRIBUTES",
    "FORMAT",
    "INPUTS",
    "MANIFEST",
    "WEIGHTS",
    "activation_key",
    "dump",
    "parse_activation_key",
    "write_safetensors",
]

FORMAT = 1
MANIFEST, WEIGHTS, INPUTS, ACTIVATIONS = (
    "manifest.json",
    "weights.safetensors",
    "inputs.npz",
    "activations.npz",
)

#: The torch module attributes the dump records (those a module has): what decides what a
#: normalisation, an activation, a dropout, a convolution, a pooling or a resize computes.
ATTRIBUTES = (
    "eps",
    "momentum",
    "affine",
    "track_running_stats",
    "normalized_shape",
    "elementwise_affine",
    "num_groups",
    "approximate",
    "p",
    "negative_slope",
    "dim",
    "kernel_size",
    "stride",
    "padding",
    "dilation",
    "groups",
    "padding_mode",
    "ceil_mode",
    "count_include_pad",
    "output_size",
    "mode",
    "align_corners",
    "scale_factor",
)

_SAFETENSORS_DTYPES = {
    np.dtype("<f8"): "F64",
    np.dtype("<f4"): "F32",
    np.dtype("<f2"): "F16",
    np.dtype("<i8"): "I64",
    np.dtype("<i4"): "I32",
    np.dtype("<i2"): "I16",
    np.dtype("i1"): "I8",
    np.dtype("u1"): "U8",
    np.dtype("?"): "BOOL",
}


def activation_key(path: str, call: int, io: str, index: int) -> str:
    """The name of one recorded tensor: *path*'s *call*-th call, its *io* tensor number *index*."""
    return f"{path}#{call}/{io}.{index}"


def parse_activation_key(key: str) -> tuple[str, int, str, int]:
    """``(path, call, io, index)`` of a name :func:`activation_key` made."""
    path, _, rest = key.rpartition("#")
    call, _, tensor = rest.partition("/")
    io, _, index = tensor.partition(".")
    return path, int(call), io, int(index)


def write_safetensors(path: str, tensors: Mapping[str, np.ndarray]) -> None:
    """Write *tensors* as a ``.safetensors`` file (the format of huggingface/safetensors)."""
    header: dict[str, Any] = {}
    offset = 0
    arrays = {}
    for name, value in tensors.items():
        array = np.ascontiguousarray(value)
        if array.dtype.newbyteorder("<") in _SAFETENSORS_DTYPES:
            array = array.astype(array.dtype.newbyteorder("<"), copy=False)
        if array.dtype not in _SAFETENSORS_DTYPES:
            raise ValueError(f"{name}: dtype {array.dtype} has no safetensors name here")
        header[name] = {
            "dtype": _SAFETENSORS_DTYPES[array.dtype],
            "shape": list(array.shape),
            "data_offsets": [offset, offset + array.nbytes],
        }
        offset += array.nbytes
        arrays[name] = array
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-aligned, as safetensors writes it
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for array in arrays.values():
            f.write(array.tobytes())


class _NpzWriter:
    """An ``.npz`` written one array at a time (``np.savez`` needs them all at once)."""

    def __init__(self, path: str) -> None:
        self.zip = zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True)

    def add(self, name: str, array: np.ndarray) -> None:
        with self.zip.open(f"{name}.npy", "w", force_zip64=True) as f:
            np.lib.format.write_array(f, np.ascontiguousarray(array), allow_pickle=False)

    def close(self) -> None:
        self.zip.close()


def _numpy(tensor: Any) -> np.ndarray:
    """A torch tensor's values as NumPy; floating point as float32 (bfloat16 has no NumPy type)."""
    value = tensor.detach().cpu()
    if value.is_floating_point():
        value = value.float()
    return value.numpy()


def _tensors(value: Any) -> Iterator[Any]:
    """The tensors in *value*: itself, or those in its tuples, lists and dicts, in order."""
    if hasattr(value, "detach") and hasattr(value, "is_floating_point"):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _tensors(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item)


def _state(model: Any) -> tuple[dict[str, np.ndarray], list[list[str]]]:
    """The state dict as arrays, a tensor shared under several names stored once, and those ties."""
    arrays: dict[str, np.ndarray] = {}
    first: dict[tuple[int, int, tuple[int, ...]], str] = {}
    ties: dict[str, list[str]] = {}
    for name, tensor in model.state_dict(keep_vars=False).items():
        key = (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tuple(tensor.shape))
        if key in first and tensor.numel():
            ties.setdefault(first[key], [first[key]]).append(name)
            continue
        first[key] = name
        arrays[name] = _numpy(tensor)
    return arrays, list(ties.values())


def _plain(value: Any) -> Any:
    """*value* as JSON holds it (tuples as lists), or ``None`` when it is no number, string or flag."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (tuple, list)) and all(isinstance(v, (bool, int, float, str)) for v in value):
        return list(value)
    return None


def module_attributes(model: Any) -> dict[str, dict[str, Any]]:
    """Module path -> its class and the :data:`ATTRIBUTES` it has (a value JSON cannot hold is left out)."""
    recorded = {}
    for path, module in model.named_modules():
        entry: dict[str, Any] = {"class": type(module).__name__}
        for name in ATTRIBUTES:
            raw = getattr(module, name, None) if hasattr(module, name) else ...
            if raw is None or _plain(raw) is not None:  # None says something: BatchNorm's momentum=None
                entry[name] = _plain(raw)
        recorded[path] = entry
    return recorded


def _record(
    model: Any, names: list[str], tensors: list[Any], keywords: bool, folder: str
) -> list[dict[str, Any]]:
    """Run *model* once on the batch, every module's inputs and outputs streamed to the folder; the calls."""
    import torch

    batch = _NpzWriter(os.path.join(folder, INPUTS))
    for name, tensor in zip(names, tensors):
        batch.add(name, _numpy(tensor))
    batch.close()
    calls: dict[str, int] = {}
    order: list[dict[str, Any]] = []
    writer = _NpzWriter(os.path.join(folder, ACTIVATIONS))

    def hook(path: str) -> Any:
        def record(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any], output: Any) -> None:
            call = calls.get(path, 0)
            calls[path] = call + 1
            order.append({"path": path, "call": call, "class": type(module).__name__})
            for index, tensor in enumerate(_tensors((args, kwargs))):
                writer.add(activation_key(path, call, "input", index), _numpy(tensor))
            for index, tensor in enumerate(_tensors(output)):
                writer.add(activation_key(path, call, "output", index), _numpy(tensor))

        return record

    was_training = model.training
    handles = [m.register_forward_hook(hook(p), with_kwargs=True) for p, m in model.named_modules()]
    try:
        model.eval()
        with torch.no_grad():
            if keywords:
                model(**dict(zip(names, tensors)))
            else:
                model(*tensors)
    finally:
        for handle in handles:
            handle.remove()
        model.train(was_training)
        writer.close()
    return order


def dump(
    model: Any, inputs: Sequence[Any] | Mapping[str, Any] | None, folder: str, *, activations: bool = True
) -> dict[str, Any]:
    """Run the torch *model* once on *inputs* and write the folder ``reference=`` reads; returns the manifest.

    *inputs* are the forward call's arguments: a tuple (positional) or a dict (keywords), of
    torch tensors or NumPy arrays. The model is put in ``eval()`` mode for the pass and back
    in its own mode afterwards. ``activations=False`` (``--weights-only``) runs nothing and
    writes the weights and the modules' attributes only (*inputs* may be ``None``): a small
    folder for the structure and attribute checks (GA630-GA638), not the outputs' (GA640).
    """
    import torch

    os.makedirs(folder, exist_ok=True)
    inputs = inputs if activations and inputs is not None else ()
    keywords = isinstance(inputs, Mapping)
    names = list(inputs) if isinstance(inputs, Mapping) else [str(i) for i in range(len(inputs))]
    values = list(inputs.values()) if isinstance(inputs, Mapping) else list(inputs)
    tensors = [torch.from_numpy(np.asarray(v)) if isinstance(v, np.ndarray) else v for v in values]
    order = _record(model, names, tensors, keywords, folder) if activations else []
    weights, ties = _state(model)
    write_safetensors(os.path.join(folder, WEIGHTS), weights)
    manifest = {
        "graphaudit_reference": FORMAT,
        "model": f"{type(model).__module__}.{type(model).__qualname__}",
        "framework": f"torch {torch.__version__}",
        "inputs": [
            {"name": n, "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
            for n, t in zip(names, tensors)
        ],
        "keywords": keywords,
        "calls": order,
        "ties": ties,
        "modules": module_attributes(model),
        "activations": activations,
    }
    with open(os.path.join(folder, MANIFEST), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1)
    return manifest


def _factory(spec: str) -> Any:
    """``path/to/file.py:name`` or ``package.module:name``, imported."""
    module_name, _, attr = spec.partition(":")
    if not attr:
        raise SystemExit(f"{spec!r}: write MODULE:FACTORY, e.g. models/original.py:build")
    if module_name.endswith(".py"):
        loader = importlib.util.spec_from_file_location("_graphaudit_original", module_name)
        if loader is None or loader.loader is None:
            raise SystemExit(f"{module_name!r} cannot be imported")
        module = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(module)
    else:
        module = importlib.import_module(module_name)
    return getattr(module, attr)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m graphaudit.reference",
        description="Dump a PyTorch original's weights and every module's inputs and outputs on one batch.",
    )
    parser.add_argument(
        "factory", help="MODULE:FACTORY that returns the torch.nn.Module, e.g. models/original.py:build"
    )
    parser.add_argument("--inputs", help="an .npz of the batch: arrays '0', '1'... or by keyword")
    parser.add_argument(
        "--weights-only",
        action="store_true",
        help="run nothing: write the weights and the modules' attributes only (no --inputs needed)",
    )
    parser.add_argument("--out", required=True, help="the folder to write")
    args = parser.parse_args(argv)
    if not args.inputs and not args.weights_only:
        parser.error("--inputs is needed to record the outputs (or give --weights-only)")
    sys.path.insert(0, os.getcwd())
    model = _factory(args.factory)()
    if args.weights_only:
        manifest = dump(model, None, args.out, activations=False)
        print(f"wrote {args.out}: the weights and {len(manifest['modules'])} modules' attributes")
        return
    with np.load(args.inputs, allow_pickle=False) as batch:
        keys = list(batch.files)
        positional = all(k.isdigit() for k in keys)
        arrays = {k: batch[k] for k in sorted(keys, key=int)} if positional else {k: batch[k] for k in keys}
    manifest = dump(model, tuple(arrays.values()) if positional else arrays, args.out)
    print(f"wrote {args.out}: {len(manifest['calls'])} module calls, {len(manifest['ties'])} ties")


if __name__ == "__main__":
    main()
