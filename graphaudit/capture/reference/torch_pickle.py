"""A PyTorch ``.pth``/``.bin`` state dict read without torch and without running the pickle's code.

``torch.save`` writes a zip: ``<dir>/data.pkl`` (a pickle), ``<dir>/data/<key>`` (each storage's
raw bytes) and ``<dir>/byteorder``. A pickle names the functions that rebuild its objects and
the unpickler calls them: ``torch.load`` with ``weights_only=False`` runs whatever the file
names (``os.system`` as well as ``torch._utils._rebuild_tensor_v2``). :class:`_TensorsOnly`
resolves only torch's tensor-rebuilding names, to functions of its own that build NumPy
arrays, and ``collections.OrderedDict``; a file that names anything else is refused with an
:class:`~graphaudit.errors.ArgumentError` before anything it names is called.

Tensors that share a storage at the same offset, shape and strides are the same tensor saved
twice (a tied weight): :func:`read_torch_state` returns those groups too.
"""

from __future__ import annotations

import collections
import io
import pickle
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphaudit.errors import ArgumentError

__all__ = ["TorchState", "read_torch_state", "read_torch_tensor"]

_STORAGES = {
    "FloatStorage": np.float32,
    "DoubleStorage": np.float64,
    "HalfStorage": np.float16,
    "BFloat16Storage": np.uint16,  # widened to float32 when the tensor is rebuilt
    "LongStorage": np.int64,
    "IntStorage": np.int32,
    "ShortStorage": np.int16,
    "CharStorage": np.int8,
    "ByteStorage": np.uint8,
    "BoolStorage": np.bool_,
    "UntypedStorage": np.uint8,
}


@dataclass(frozen=True)
class _StorageType:
    name: str


@dataclass(frozen=True)
class _Storage:
    key: str
    dtype: Any


@dataclass(frozen=True)
class TorchState:
    """The arrays of a saved state dict (``name -> array``, in the file's order) and its tied names."""

    tensors: dict[str, np.ndarray]
    ties: tuple[tuple[str, ...], ...]
    found_under: str  # "" for a bare state dict, else the key it was found under ("state_dict"...)


class _Tensor(np.ndarray):
    """An array that remembers where in which storage it lies (to tell tied tensors apart)."""

    where: tuple[Any, ...] = ()


def _refuse(path: str, what: str) -> ArgumentError:
    return ArgumentError(
        f"reference= {path!r} asks to run {what} when it is read; graphaudit reads only tensors from a "
        "PyTorch file and never runs a pickle's code. Save the original's weights alone: "
        "torch.save(model.state_dict(), 'ref.pth'), or safetensors.torch.save_file(model.state_dict(), "
        "'ref.safetensors')."
    )


class _TensorsOnly(pickle.Unpickler):
    def __init__(self, data: bytes, path: str, read_storage: Callable[[str], bytes], order: str) -> None:
        super().__init__(io.BytesIO(data))
        self._path = path
        self._read = read_storage
        self._order = order
        self._storages: dict[str, np.ndarray] = {}

    def find_class(self, module: str, name: str) -> Any:
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        if module == "torch" and name in _STORAGES:
            return _StorageType(name)
        if module == "torch" and name == "Size":
            return tuple
        if module == "torch._utils" and name == "_rebuild_tensor_v2":
            return self._rebuild
        if module == "torch._utils" and name in ("_rebuild_parameter", "_rebuild_parameter_with_state"):
            return lambda data, *_: data
        raise _refuse(self._path, f"{module}.{name}")

    def persistent_load(self, pid: Any) -> Any:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise _refuse(self._path, f"an unknown persistent object {str(pid)[:60]!r}")
        storage_type, key = pid[1], str(pid[2])
        if not isinstance(storage_type, _StorageType):
            raise _refuse(self._path, f"a storage of type {storage_type!r}")
        return _Storage(key, _STORAGES[storage_type.name])

    def _rebuild(self, storage: Any, offset: int, size: Any, stride: Any, *_: Any) -> np.ndarray:
        if not isinstance(storage, _Storage):
            raise _refuse(self._path, "a tensor rebuilt from something that is not a storage")
        if storage.key not in self._storages:
            raw = self._read(storage.key)
            dtype = np.dtype(storage.dtype).newbyteorder(self._order)
            self._storages[storage.key] = np.frombuffer(raw, dtype=dtype)
        flat = self._storages[storage.key]
        shape, strides = tuple(int(d) for d in size), tuple(int(s) for s in stride)
        if (
            shape
            and offset + sum((d - 1) * s for d, s in zip(shape, strides)) >= flat.size
            and 0 not in shape
        ):
            raise ArgumentError(f"reference= {self._path!r}: a tensor lies past the end of its storage.")
        view = np.lib.stride_tricks.as_strided(
            flat[offset:], shape=shape, strides=tuple(s * flat.itemsize for s in strides), writeable=False
        )
        array = np.array(view, dtype=view.dtype.newbyteorder("="))  # a copy (ascontiguousarray makes 0-d 1-d)
        if storage.dtype is np.uint16:
            array = (array.astype(np.uint32) << 16).view(np.float32)
        tagged = array.view(_Tensor)
        tagged.where = (storage.key, int(offset), shape, strides)
        return tagged


def read_torch_state(path: str) -> TorchState:
    """The tensors of the ``torch.save`` zip at *path*, read with :class:`_TensorsOnly`."""
    return _state_of(_load(path), path)


def read_torch_tensor(path: str) -> np.ndarray:
    """The one tensor ``torch.save(tensor, path)`` wrote (msprobe's ``.pt`` files), read alike."""
    loaded = _load(path)
    if not isinstance(loaded, np.ndarray):
        raise ArgumentError(
            f"reference= {path!r} holds a {type(loaded).__name__}, not the one tensor msprobe saves per file."
        )
    return np.asarray(loaded).view(np.ndarray)


def _load(path: str) -> Any:
    """What the pickle of *path* holds, its tensors rebuilt as NumPy arrays; nothing else run."""
    if not zipfile.is_zipfile(path):
        raise ArgumentError(
            f"reference= {path!r} is not a zip file as torch.save writes them since PyTorch 1.6 (an older "
            "file, or another format): save it again with torch.save(model.state_dict(), 'ref.pth') or "
            "as .safetensors."
        )
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        pickles = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
        if not pickles:
            hint = " (a TorchScript archive)" if any(n.endswith("constants.pkl") for n in names) else ""
            raise ArgumentError(
                f"reference= {path!r} holds no data.pkl{hint}: it is not a state dict saved by torch.save; "
                "save model.state_dict() with torch.save or as .safetensors."
            )
        prefix = pickles[0][: -len("data.pkl")]
        order = "<"
        if prefix + "byteorder" in names and archive.read(prefix + "byteorder").strip() == b"big":
            order = ">"

        def storage(key: str) -> bytes:
            try:
                return archive.read(f"{prefix}data/{key}")
            except KeyError as err:
                raise ArgumentError(f"reference= {path!r}: storage {key} is missing from the zip.") from err

        try:
            loaded = _TensorsOnly(archive.read(pickles[0]), path, storage, order).load()
        except ArgumentError:
            raise
        except Exception as err:  # a corrupt pickle: its own words
            raise ArgumentError(f"reference= {path!r}: its pickle is not readable ({err}).") from err
    return loaded


def _state_of(loaded: Any, path: str) -> TorchState:
    found_under = ""
    if isinstance(loaded, dict) and not any(isinstance(v, np.ndarray) for v in loaded.values()):
        for key in ("state_dict", "model_state_dict", "model", "module", "net", "network"):
            if isinstance(loaded.get(key), dict):
                loaded, found_under = loaded[key], key
                break
    if not isinstance(loaded, dict):
        raise ArgumentError(
            f"reference= {path!r} holds a {type(loaded).__name__}, not a state dict: save model.state_dict()."
        )
    tensors = {str(k): v for k, v in loaded.items() if isinstance(v, np.ndarray)}
    if not tensors:
        raise ArgumentError(f"reference= {path!r} holds no tensors at its top level nor under 'state_dict'.")
    groups: dict[tuple[Any, ...], list[str]] = {}
    for name, array in tensors.items():
        groups.setdefault(getattr(array, "where", (name,)), []).append(name)
    ties = tuple(tuple(names) for names in groups.values() if len(names) > 1)
    plain = {name: np.asarray(array).view(np.ndarray) for name, array in tensors.items()}
    return TorchState(plain, ties, found_under)
