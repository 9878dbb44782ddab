"""The weights of an ONNX file (its initializers), read with the ``onnx`` package.

``torch.onnx.export`` folds the transpose of a ``Linear`` fed a tensor of more than two axes
into its weight: the initializer (``onnx::MatMul_123``) holds ``weight.T``, stored ``(in, out)``
and consumed as the second input of a ``MatMul``. Those names are returned apart
(``matmul_right``) so that the mapping compares them in that layout, not as a transposed load.
"""

from __future__ import annotations

import os

import numpy as np

from graphaudit.errors import ArgumentError

__all__ = ["read_onnx_weights"]


def read_onnx_weights(path: str) -> tuple[dict[str, np.ndarray], frozenset[str], frozenset[str]]:
    """``(name -> array, names consumed as a MatMul's right operand, the graph's op types)`` of the file at *path*."""
    try:
        import onnx
        from onnx import numpy_helper
    except ImportError as err:
        raise ArgumentError(
            f"reference= {path!r} is an ONNX file, and reading one needs the onnx package: "
            "pip install 'graphaudit[reference]' (or pip install 'onnx<1.18' beside numpy<2)."
        ) from err
    try:
        model = onnx.load(path, load_external_data=False)
    except Exception as err:
        raise ArgumentError(f"reference= {path!r} is not a readable ONNX file: {err}") from err
    graph = model.graph
    tensors: dict[str, np.ndarray] = {}
    folder = os.path.dirname(os.path.abspath(path))
    for init in graph.initializer:
        if init.data_location == onnx.TensorProto.EXTERNAL:
            where = {e.key: e.value for e in init.external_data}.get("location", "?")
            if not os.path.isfile(os.path.join(folder, where)):
                raise ArgumentError(
                    f"reference= {path!r}: initializer {init.name!r} is stored in the external file "
                    f"{where!r}, which is not beside it; copy it next to the .onnx file."
                )
        tensors[init.name] = numpy_helper.to_array(init, base_dir=folder)
    right = frozenset(n.input[1] for n in graph.node if n.op_type == "MatMul" and len(n.input) > 1)
    return tensors, right & tensors.keys(), frozenset(n.op_type for n in graph.node)
