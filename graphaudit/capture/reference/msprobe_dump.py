"""An msprobe (MindStudio Probe) dump of the original, read as it is: what each module computed.

msprobe's ``PrecisionDebugger`` at level ``L0`` (modules) or ``mix`` writes, under its
``dump_path``, ``step<N>/rank<R>/`` (``proc<pid>/`` when not distributed) holding:

- ``dump.json``: ``{"task", "level", "framework", "dump_data_dir", "data"}``; ``data`` maps
  ``Module.<path>.<Class>.forward.<call>`` (``Cell.<path>.<Class>.construct.<call>`` for a
  MindSpore original) to ``input_args`` (a list), ``input_kwargs`` (a dict), ``output`` and
  ``parameters`` (each module's own weights, by their short names), in the order the calls
  returned; each tensor there has its statistics (``Max``, ``Min``, ``Mean``, ``Norm``) and, with
  task ``tensor``, the ``data_name`` of its file;
- ``dump_tensor_data/``: one file per tensor, ``<entry>.<input|output>.<i>.pt`` (``torch.save``
  of one tensor; read by :mod:`.torch_pickle`, no pickle's code run) or ``.npy``.

:func:`read_msprobe` reads what a :class:`~graphaudit.capture.reference.Reference` holds: the
weights are the modules' ``parameters`` (or, when a weights file lies beside ``dump.json``, its
state dict: msprobe records no buffers, so BatchNorm's running statistics need it), the
activations :class:`MsprobeActivations` (what :class:`.dump_folder.Activations` gives) and the
batch the inputs of the first call. A task ``statistics`` dump holds no tensor: its weights must
lie beside it and the outputs are not compared (GA640 says why).

Example:
    >>> parse_entry("Module.encoder.layer.0.Linear.forward.2")
    ('encoder.layer.0', 2)
    >>> parse_entry("Functional.linear.0.forward") is None
    True
"""

from __future__ import annotations

import glob
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphaudit.errors import ArgumentError

__all__ = ["DUMP_JSON", "MsprobeActivations", "MsprobeDump", "find_dump_json", "parse_entry", "read_msprobe"]

DUMP_JSON = "dump.json"
_ENTRY = re.compile(r"^(?:Module|Cell)\.(?P<path>.+)\.(?P<cls>[^.]+)\.(?:forward|construct)\.(?P<call>\d+)$")
_WEIGHT_SUFFIXES = (".safetensors", ".pth", ".pt", ".bin")
# Modules whose forward reads buffers msprobe does not record: their dump needs the state dict.
_STATEFUL = re.compile(r"^(Sync)?BatchNorm\d?d?$|^InstanceNorm\dd$")


def parse_entry(name: str) -> tuple[str, int] | None:
    """``(module path, call)`` of a dump.json module entry; ``None`` for API entries and backward."""
    match = _ENTRY.match(name)
    return (match["path"], int(match["call"])) if match else None


def is_msprobe_dump(path: str) -> bool:
    """Whether *path* is ``dump.json``, or a folder holding one or a ``step*/*/dump.json`` tree."""
    if os.path.isfile(path):
        return os.path.basename(path) == DUMP_JSON
    return os.path.isfile(os.path.join(path, DUMP_JSON)) or bool(_candidates(path))


def _candidates(path: str) -> list[str]:
    found = glob.glob(os.path.join(glob.escape(path), "step*", "*", DUMP_JSON))
    found += glob.glob(os.path.join(glob.escape(path), "*", DUMP_JSON))  # a step folder given
    return sorted(set(found))


def find_dump_json(path: str) -> str:
    """The ``dump.json`` *path* means: itself, the one in it, or rank 0's of the only step."""
    if os.path.isfile(path):
        return path
    if os.path.isfile(os.path.join(path, DUMP_JSON)):
        return os.path.join(path, DUMP_JSON)
    found = _candidates(path)
    if len(found) == 1:
        return found[0]
    steps = {os.path.dirname(os.path.dirname(f)) for f in found}
    rank0 = [f for f in found if os.path.basename(os.path.dirname(f)) in ("rank0", "rank")]
    if len(steps) == 1 and len(rank0) == 1:
        return rank0[0]  # each rank ran its own share of the batch: rank 0's is one whole run
    choices = ", ".join(os.path.relpath(os.path.dirname(f), path) for f in found)
    raise ArgumentError(
        f"reference= {path!r} holds several msprobe dumps ({choices}): pass the folder of the one to "
        "compare, e.g. reference='"
        + os.path.join(path, os.path.relpath(os.path.dirname(found[0]), path))
        + "'."
    )


@dataclass
class MsprobeActivations:
    """The original's recorded module calls, each tensor read from its file when asked for.

    ``calls``: ``(path, call)`` in the order the calls returned; ``inputs``: the batch.
    """

    path: str
    calls: list[tuple[str, int]]
    inputs: list[np.ndarray]
    files: dict[tuple[str, int, str], list[str]] = field(default_factory=dict)

    def output(self, path: str, call: int) -> list[np.ndarray]:
        """The tensors module *path*'s *call*-th call returned (none when it was not recorded)."""
        return [_tensor(f) for f in self.files.get((path, call, "output"), [])]

    def input(self, path: str, call: int) -> list[np.ndarray]:
        """The tensors module *path*'s *call*-th call was given."""
        return [_tensor(f) for f in self.files.get((path, call, "input"), [])]

    def close(self) -> None:
        """Nothing is held open (each file is read whole when asked for)."""


def _tensor(file: str) -> np.ndarray:
    if file.endswith(".npy"):
        try:
            return np.load(file, allow_pickle=False)
        except (OSError, ValueError) as err:
            raise ArgumentError(f"reference= {file!r} is not a readable .npy file ({err}).") from err
    from graphaudit.capture.reference.torch_pickle import read_torch_tensor

    return read_torch_tensor(file)


def _described(value: Any) -> Iterator[dict[str, Any] | None]:
    """The tensors dump.json describes in *value* (a list, dict or one), in order; None for one not saved."""
    if isinstance(value, dict) and "type" in value:
        if str(value["type"]).endswith("Tensor"):
            yield value if value.get("data_name") else None
    elif isinstance(value, dict):
        for item in value.values():
            yield from _described(item)
    elif isinstance(value, list):
        for item in value:
            yield from _described(item)


def _read_json(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            dump = json.load(f)
    except (OSError, ValueError) as err:
        raise ArgumentError(
            f"reference= {path!r} cannot be read as msprobe's dump.json ({err}): copy it "
            "again as msprobe wrote it, or pass the folder PrecisionDebugger wrote."
        ) from err
    if not isinstance(dump, dict) or not isinstance(dump.get("data"), dict):
        raise ArgumentError(
            f'reference= {path!r} is not msprobe\'s dump.json (no "data" table of dumped calls): pass the '
            "folder PrecisionDebugger wrote."
        )
    return dump


def _weights_beside(folder: str) -> str | None:
    files = sorted(f for f in os.listdir(folder) if f.lower().endswith(_WEIGHT_SUFFIXES))
    if len(files) > 1:
        raise ArgumentError(
            f"reference= {folder!r} holds several weights files beside dump.json ({', '.join(files)}): "
            "leave only the original's state dict there."
        )
    return os.path.join(folder, files[0]) if files else None


@dataclass(frozen=True)
class MsprobeDump:
    """What :func:`read_msprobe` found: the fields of a :class:`~graphaudit.capture.reference.Reference`."""

    source: str
    format: str  # "msprobe", or "msprobe-statistics" (no tensors: nothing to compare)
    tensors: dict[str, np.ndarray]
    ties: tuple[tuple[str, ...], ...]
    ordered: bool
    activations: MsprobeActivations | None


WeightsReader = Callable[[str], tuple[dict[str, np.ndarray], tuple[tuple[str, ...], ...]]]


def read_msprobe(path: str, read_weights: WeightsReader) -> MsprobeDump:
    """The msprobe dump at *path*; *read_weights* reads a state dict file lying beside its dump.json."""
    json_path = find_dump_json(path)
    folder = os.path.dirname(json_path) or "."
    dump = _read_json(json_path)
    task, level = dump.get("task", "tensor"), dump.get("level", "L0")
    entries = [(parse_entry(name), name, value) for name, value in dump["data"].items()]
    modules = [(e, name, value) for e, name, value in entries if e is not None and isinstance(value, dict)]
    if not modules:
        raise ArgumentError(
            f"reference= {json_path!r} records no module calls (level {level!r}; L1 dumps only APIs): dump "
            'the original with level "L0" (or "mix") so each module\'s outputs are there.'
        )
    if task not in ("tensor", "statistics"):
        raise ArgumentError(
            f'reference= {json_path!r} is an msprobe {task!r} dump: graphaudit compares a "tensor" dump '
            '(or reads the weights beside a "statistics" one).'
        )
    data_dir = os.path.join(folder, "dump_tensor_data")
    recorded = dump.get("dump_data_dir")
    if not os.path.isdir(data_dir) and isinstance(recorded, str) and os.path.isdir(recorded):
        data_dir = (
            recorded  # dump.json copied apart from its tensors, which are still where msprobe wrote them
        )
    weights_file = _weights_beside(folder)
    tensors: dict[str, np.ndarray] = {}
    if weights_file is not None:
        tensors, ties = read_weights(weights_file)
    else:
        ties = ()
        stateful = sorted(
            {m.group("cls") for _, n, _ in modules if (m := _ENTRY.match(n)) and _STATEFUL.match(m["cls"])}
        )
        if task != "tensor" or stateful:
            why = (
                f"its {', '.join(stateful)} read running statistics msprobe does not record"
                if task == "tensor"
                else "a statistics dump holds no tensors"
            )
            raise ArgumentError(
                f"reference= {json_path!r}: the original's weights are not all in this msprobe dump ({why}). "
                "Save its state dict beside dump.json (torch.save(model.state_dict(), 'original.pth') or a "
                ".safetensors file) and pass the folder again."
            )
        for (module, call), _name, value in modules:
            if call != 0:
                continue
            for short, described in (value.get("parameters") or {}).items():
                if isinstance(described, dict) and described.get("data_name"):
                    tensors[f"{module}.{short}" if module else short] = _tensor(
                        _file(data_dir, json_path, described["data_name"])
                    )
        if not tensors:
            raise ArgumentError(
                f"reference= {json_path!r} records no module parameters (an msprobe that leaves "
                "them out): save the original's state dict beside dump.json and pass the folder again."
            )
        ties = _equal_values(tensors)
    if task != "tensor":
        return MsprobeDump(json_path, "msprobe-statistics", tensors, ties, weights_file is None, None)
    files: dict[tuple[str, int, str], list[str]] = {}
    for (module, call), _name, value in modules:
        for io, described in (
            ("input", [value.get("input_args"), value.get("input_kwargs")]),
            ("output", value.get("output")),
        ):
            listed = list(_described(described))
            if listed and all(d is not None for d in listed):
                files[(module, call, io)] = [_file(data_dir, json_path, d["data_name"]) for d in listed]
    calls = [key for key, _, _ in modules]
    first = _outermost(calls)
    batch = [_tensor(f) for f in files.get((*first, "input"), [])]
    activations = MsprobeActivations(json_path, calls, batch, files)
    return MsprobeDump(json_path, "msprobe", tensors, ties, weights_file is None, activations)


def _equal_values(tensors: dict[str, np.ndarray]) -> tuple[tuple[str, ...], ...]:
    """Parameters recorded under several modules with the very same values: one tied weight.

    msprobe saves a shared parameter once per module that holds it and records no storage, so a
    tie (GPT-2's lm_head and wte) shows only as equal values. A constant tensor (a fresh norm's
    ones) says nothing: two of them are equal without being one.
    """
    groups: dict[tuple[Any, ...], list[str]] = {}
    for name, array in tensors.items():
        flat = array.reshape(-1)
        if flat.size > 1 and np.issubdtype(array.dtype, np.floating) and not (flat == flat[0]).all():
            groups.setdefault((array.shape, array.dtype.str, array.tobytes()), []).append(name)
    return tuple(tuple(names) for names in groups.values() if len(names) > 1)


def _file(data_dir: str, json_path: str, name: str) -> str:
    file = os.path.join(data_dir, os.path.basename(name))
    if not os.path.isfile(file):
        raise ArgumentError(
            f"reference= {json_path!r} names {name!r}, which is not in {data_dir}: copy the whole folder "
            "msprobe wrote (dump.json and dump_tensor_data/)."
        )
    return file


def _outermost(calls: list[tuple[str, int]]) -> tuple[str, int]:
    """The call that holds the first one returned: the model's first module, given the batch.

    msprobe does not dump the model itself; the first call returned is a leaf, and its outermost
    recorded ancestor (by path) started first.
    """
    path, call = calls[0]
    recorded = set(calls)
    parts = path.split(".")
    for end in range(1, len(parts)):
        if (".".join(parts[:end]), 0) in recorded:
            return ".".join(parts[:end]), 0
    return path, call
