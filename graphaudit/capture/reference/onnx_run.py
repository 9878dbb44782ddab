"""An ONNX original run in onnxruntime with every module's inputs and outputs exposed.

``torch.onnx.export`` names each node by the modules it was traced in:
``/encoder/layer.0/attention/self/query/MatMul`` is a node of module
``encoder.layer.0.attention.self.query``. A module's outputs are the values its nodes make
that a node outside it reads (or the graph returns), the last made first (what ``forward``
returns is computed last); its inputs are the values its nodes read that were made outside it
(the graph's inputs or another module's values; weights and constants aside). The graph is run
once with all of those exposed as outputs, on the batch the port is audited with, and read as
:class:`~graphaudit.capture.reference.dump_folder.Activations` are (one call per module).

A wrapper the exporter was given (``Wrapper(model)``: every node under ``/model/``) is taken
off the names when the weights do not carry it.

Example:
    >>> _module_of("/encoder/layer.0/attention/self/query/MatMul"), _module_of("/Gather"), _module_of("Add_3")
    ('encoder.layer.0.attention.self.query', '', '')
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphaudit.errors import ArgumentError

__all__ = ["OnnxActivations", "run_onnx"]

_NUMPY_OF_ONNX = {1: np.float32, 6: np.int32, 7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64}


def _module_of(node_name: str) -> str:
    """The module path a node was traced in: its name's scopes joined by dots."""
    if not node_name.startswith("/"):
        return ""
    return ".".join(part for part in node_name.split("/")[1:-1] if part)


def _inside(module: str, path: str) -> bool:
    return not module or path == module or path.startswith(module + ".")


class OnnxActivations:
    """What each module of the ONNX graph was given and returned on one batch."""

    def __init__(
        self,
        calls: list[tuple[str, int]],
        inputs: list[np.ndarray],
        values: dict[str, np.ndarray],
        ports: dict[str, tuple[list[str], list[str]]],
    ) -> None:
        self.calls = calls
        self.inputs = inputs
        self.path = "onnxruntime"
        self._values = values
        self._ports = ports  # module -> (its input value names, its output value names)

    def output(self, path: str, call: int) -> list[np.ndarray]:
        names = self._ports.get(path, ([], []))[1] if call == 0 else []
        return [self._values[n] for n in names if n in self._values]

    def input(self, path: str, call: int) -> list[np.ndarray]:
        names = self._ports.get(path, ([], []))[0] if call == 0 else []
        return [self._values[n] for n in names if n in self._values]

    def close(self) -> None:
        self._values = {}


def run_onnx(path: str, batch: list[np.ndarray]) -> OnnxActivations:
    """Run the ONNX file at *path* on *batch* (its graph inputs in order), every module's values kept."""
    try:
        import onnx
        import onnxruntime
    except ImportError as err:
        raise ArgumentError(
            f"reference= {path!r}: running an ONNX original needs onnx and onnxruntime: "
            "pip install 'graphaudit[reference]'."
        ) from err
    model = onnx.load(path, load_external_data=True)
    graph = model.graph
    weights = {init.name for init in graph.initializer}
    graph_inputs = [i.name for i in graph.input if i.name not in weights]
    if len(graph_inputs) != len(batch):
        raise ArgumentError(
            f"reference= {path!r} takes {len(graph_inputs)} inputs ({', '.join(graph_inputs)}), "
            f"but the batch has {len(batch)} tensors: pass inputs= as the original was exported with."
        )
    nodes = [(n, _module_of(n.name)) for n in graph.node]
    wrapper = _wrapper(nodes, weights)
    if wrapper:
        nodes = [(n, m[len(wrapper) + 1 :] if m != wrapper else "") for n, m in nodes]
    made_in: dict[str, tuple[str, int]] = {name: ("\0input", -1) for name in graph_inputs}
    constants = set(weights)
    for index, (node, module) in enumerate(nodes):
        for value in node.output:
            made_in[value] = (module, index)
            if node.op_type == "Constant":
                constants.add(value)
    modules: dict[str, int] = {}
    for index, (_, module) in enumerate(nodes):
        parts = module.split(".") if module else []
        for end in range(len(parts) + 1):
            modules[".".join(parts[:end])] = index  # a module's last node: when it returned
    ports: dict[str, tuple[list[str], list[str]]] = {}
    returned = {o.name for o in graph.output}
    readers: dict[str, list[str]] = {}  # value -> the modules of the nodes that read it
    for node, where in nodes:
        for value in node.input:
            readers.setdefault(value, []).append(where)
    for module in modules:
        ins: list[str] = []
        outs: list[str] = []
        for node, where in nodes:
            if not _inside(module, where):
                continue
            for value in node.input:
                if value and value not in constants and value not in ins and value in made_in:
                    maker = made_in[value][0]
                    if maker == "\0input" or not _inside(module, maker):
                        ins.append(value)
        for value, (maker, _) in made_in.items():
            if maker == "\0input" or value in constants or not _inside(module, maker):
                continue
            read_outside = value in returned or any(not _inside(module, w) for w in readers.get(value, ()))
            if read_outside:
                outs.append(value)
        outs.sort(key=lambda v: -made_in[v][1])
        ports[module] = (ins, outs)
    exposed = sorted({v for ins, outs in ports.values() for v in (*ins, *outs)} - set(graph_inputs))
    have = {o.name for o in graph.output}
    graph.output.extend(onnx.ValueInfoProto(name=v) for v in exposed if v not in have)
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feed = {}
    for name, array, spec in zip(graph_inputs, batch, [i for i in graph.input if i.name not in weights]):
        wanted = _NUMPY_OF_ONNX.get(spec.type.tensor_type.elem_type)
        feed[name] = np.asarray(array, dtype=wanted) if wanted is not None else np.asarray(array)
    names = [o.name for o in session.get_outputs()]
    values = dict(zip(names, session.run(names, feed)))
    values.update(feed)
    calls = [(m, 0) for m in sorted(modules, key=lambda m: (modules[m], -m.count(".")))]
    return OnnxActivations(calls, list(batch), values, ports)


def _wrapper(nodes: list[tuple[Any, str]], weights: set[str]) -> str:
    """The scope every node is under when the weights' names do not start with it (an export wrapper)."""
    firsts = {module.split(".")[0] for _, module in nodes if module}
    if len(firsts) != 1:
        return ""
    (first,) = firsts
    return first if first and not any(w.startswith(first + ".") for w in weights) else ""
