"""A ``.safetensors`` file read into NumPy without the ``safetensors`` package, and without copying.

The format (huggingface/safetensors, ``docs``): 8 bytes, the header's length as a little-endian
unsigned 64-bit integer; the header, JSON: ``name -> {"dtype", "shape", "data_offsets"}``
(offsets into the data that follows the header) and an optional ``"__metadata__"`` of strings;
then the data. Tensors are memory-mapped, so a model of gigabytes costs its pages only when a
check reads its values. ``BF16`` is widened to ``float32`` (NumPy has no bfloat16) on reading.

Example:
    >>> import json, struct, tempfile, os, numpy as np
    >>> header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    >>> path = os.path.join(tempfile.mkdtemp(), "m.safetensors")
    >>> with open(path, "wb") as f:
    ...     _ = f.write(struct.pack("<Q", len(header)) + header + np.float32([1, 2]).tobytes())
    >>> read_safetensors(path)["w"]
    array([1., 2.], dtype=float32)
"""

from __future__ import annotations

import json
import struct

import numpy as np

from graphaudit.errors import ArgumentError

__all__ = ["read_safetensors"]

_DTYPES = {
    "F64": "<f8",
    "F32": "<f4",
    "F16": "<f2",
    "BF16": "<u2",  # widened below
    "I64": "<i8",
    "I32": "<i4",
    "I16": "<i2",
    "I8": "i1",
    "U8": "u1",
    "BOOL": "?",
}


def read_safetensors(path: str) -> dict[str, np.ndarray]:
    """``name -> array`` of the file at *path*, in the order of their data in the file."""
    try:
        with open(path, "rb") as f:
            head = f.read(8)
            (length,) = struct.unpack("<Q", head) if len(head) == 8 else (-1,)
            size = f.seek(0, 2)
            if not 2 <= length <= size - 8:
                raise ValueError("its first 8 bytes do not give the length of a header inside the file")
            f.seek(8)
            header = json.loads(f.read(length))
    except (OSError, ValueError) as err:
        raise ArgumentError(
            f"reference= {path!r} is not a readable .safetensors file ({err}): pass the file "
            "save_pretrained() or safetensors.torch.save_file() wrote."
        ) from err
    if not isinstance(header, dict):
        raise ArgumentError(
            f"reference= {path!r}: its header is not a JSON object; it is no .safetensors file."
        )
    header.pop("__metadata__", None)
    start = 8 + length
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=start) if size > start else np.zeros(0, np.uint8)
    tensors: dict[str, np.ndarray] = {}
    for name, entry in sorted(header.items(), key=lambda item: item[1].get("data_offsets", [0])[0]):
        dtype = entry.get("dtype")
        if dtype not in _DTYPES:
            raise ArgumentError(
                f"reference= {path!r}: tensor {name!r} has dtype {dtype!r}, which graphaudit does not "
                f"read (it reads {', '.join(_DTYPES)}); save the reference in float32."
            )
        begin, end = entry["data_offsets"]
        shape = tuple(int(d) for d in entry["shape"])
        if end > data.size or begin > end:
            raise ArgumentError(
                f"reference= {path!r}: tensor {name!r} lies past the end of the file (truncated?)."
            )
        array = data[begin:end].view(np.ndarray).view(_DTYPES[dtype]).reshape(shape)
        if dtype == "BF16":
            array = (array.astype(np.uint32) << 16).view(np.float32)
        tensors[name] = array
    return tensors
