"""A folder written by :func:`graphaudit.reference.dump`: the original's weights and what each module computed.

:func:`read_dump_folder` reads the manifest and the weights at once and leaves the
activations in their ``.npz`` (NumPy reads one array of it at a time: :class:`Activations`).

Example:
    >>> import os, tempfile, numpy as np
    >>> from graphaudit.reference import write_safetensors
    >>> folder = tempfile.mkdtemp()
    >>> write_safetensors(os.path.join(folder, "weights.safetensors"), {"w": np.ones(2, np.float32)})
    >>> np.savez(os.path.join(folder, "activations.npz"), **{"#0/output.0": np.ones(2, np.float32)})
    >>> np.savez(os.path.join(folder, "inputs.npz"), **{"0": np.ones(2, np.float32)})
    >>> with open(os.path.join(folder, "manifest.json"), "w") as f:
    ...     _ = f.write('{"graphaudit_reference": 1, "calls": [{"path": "", "call": 0}], "ties": []}')
    >>> tensors, ties, activations = read_dump_folder(folder)
    >>> list(tensors), activations.output("", 0)
    (['w'], [array([1., 1.], dtype=float32)])
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphaudit.errors import ArgumentError
from graphaudit.reference import ACTIVATIONS, FORMAT, INPUTS, MANIFEST, WEIGHTS, parse_activation_key

__all__ = ["Activations", "read_dump_folder"]


@dataclass
class Activations:
    """The original's recorded module calls, read one array at a time from ``activations.npz``.

    ``calls``: ``(path, call)`` in the order the calls returned; ``inputs``: the batch;
    ``names``: its names when the original was called with keywords (``input_ids=``...), else empty.
    """

    path: str
    calls: list[tuple[str, int]]
    inputs: list[np.ndarray]
    keys: dict[tuple[str, int, str], list[str]] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    _npz: Any = None

    def _tensors(self, path: str, call: int, io: str) -> list[np.ndarray]:
        if self._npz is None:
            self._npz = np.load(self.path, allow_pickle=False)
        return [self._npz[key] for key in self.keys.get((path, call, io), [])]

    def output(self, path: str, call: int) -> list[np.ndarray]:
        """The tensors module *path*'s *call*-th call returned (none when it was not recorded)."""
        return self._tensors(path, call, "output")

    def input(self, path: str, call: int) -> list[np.ndarray]:
        """The tensors module *path*'s *call*-th call was given."""
        return self._tensors(path, call, "input")

    def close(self) -> None:
        if self._npz is not None:
            self._npz.close()
            self._npz = None


def is_dump_folder(path: str) -> bool:
    """Whether *path* is a folder :func:`graphaudit.reference.dump` wrote."""
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, MANIFEST))


def _weights(
    path: str, manifest: dict[str, Any]
) -> tuple[dict[str, np.ndarray], tuple[tuple[str, ...], ...]]:
    from graphaudit.capture.reference.safetensors_file import read_safetensors

    if not os.path.isfile(os.path.join(path, WEIGHTS)):
        raise ArgumentError(
            f"reference= {path!r} has no {WEIGHTS}: copy the whole folder graphaudit.reference.dump wrote."
        )
    tensors = read_safetensors(os.path.join(path, WEIGHTS))
    ties = tuple(tuple(t) for t in manifest.get("ties", []) if len(t) > 1)
    for tie in ties:
        for name in tie[1:]:
            tensors.setdefault(name, tensors[tie[0]])  # stored once; every name the original has
    return tensors, ties


def read_dump_folder(
    path: str,
) -> tuple[dict[str, np.ndarray], tuple[tuple[str, ...], ...], Activations | None]:
    """The weights, the ties and the activations (``None``: dumped ``--weights-only``) of the folder at *path*."""
    try:
        with open(os.path.join(path, MANIFEST), encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError) as err:
        raise ArgumentError(f"reference= {path!r}: its {MANIFEST} cannot be read ({err}).") from err
    if not isinstance(manifest, dict) or manifest.get("graphaudit_reference") != FORMAT:
        raise ArgumentError(
            f"reference= {path!r}: {MANIFEST} is not one graphaudit.reference.dump wrote (format {FORMAT}); "
            "dump the original again with python -m graphaudit.reference."
        )
    if manifest.get("activations") is False:  # --weights-only: the weights and the attributes, no batch run
        tensors, ties = _weights(path, manifest)
        return tensors, ties, None
    for name in (WEIGHTS, ACTIVATIONS, INPUTS):
        if not os.path.isfile(os.path.join(path, name)):
            raise ArgumentError(
                f"reference= {path!r} has no {name}: copy the whole folder graphaudit.reference.dump wrote."
            )
    tensors, ties = _weights(path, manifest)
    keys: dict[tuple[str, int, str], list[str]] = {}
    archive = os.path.join(path, ACTIVATIONS)
    try:
        with zipfile.ZipFile(archive) as z:
            names = [n[: -len(".npy")] for n in z.namelist() if n.endswith(".npy")]
    except (OSError, zipfile.BadZipFile) as err:
        raise ArgumentError(f"reference= {path!r}: {ACTIVATIONS} is not readable ({err}).") from err
    for key in names:
        module, call, io, _ = parse_activation_key(key)
        keys.setdefault((module, call, io), []).append(key)
    for listed in keys.values():
        listed.sort(key=lambda k: parse_activation_key(k)[3])
    with np.load(os.path.join(path, INPUTS), allow_pickle=False) as batch:
        positional = all(k.isdigit() for k in batch.files)
        ordered = sorted(batch.files, key=int) if positional else _by_manifest(batch.files, manifest)
        inputs = [batch[k] for k in ordered]
    calls = [(c["path"], int(c["call"])) for c in manifest.get("calls", [])]
    names = [] if positional else ordered  # a batch by keyword: passed to the port by name
    return tensors, ties, Activations(archive, calls, inputs, keys, names=names)


def _by_manifest(files: list[str], manifest: dict[str, Any]) -> list[str]:
    """The batch's names in the order the manifest lists them (the call's), any other after."""
    listed = [i.get("name") for i in manifest.get("inputs", []) if isinstance(i, dict)]
    return [n for n in listed if n in files] + [n for n in files if n not in listed]
