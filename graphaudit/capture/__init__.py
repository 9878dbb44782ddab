"""Capture a MindSpore network into a ``networkx.MultiDiGraph``.

The first stage of graphaudit's pipeline (capture → graph → checks → report/render).
See :mod:`graphaudit.graph` for the vocabulary of the graph it returns and
``docs/capture.md`` for how the forward pass is traced and why.
"""

from __future__ import annotations

import inspect
import textwrap
from typing import Any

import mindspore as ms
import networkx as nx
import numpy as np
from mindspore import Tensor, nn

from graphaudit import __version__
from graphaudit.capture.isolation import preserved, synchronize
from graphaudit.capture.structure import Structure, add_structure
from graphaudit.capture.trace import Tracer, trace_forward
from graphaudit.errors import ForwardError, InputError, NotACellError

__all__ = ["capture", "check_cell", "describe_inputs", "normalize_inputs", "to_networkx"]

_SCALARS = (bool, int, float, str, type(None))


def check_cell(net: Any, *, argument: str = "net", function: str = "to_networkx") -> nn.Cell:
    """Return *net* if it is a ``nn.Cell``; raise a :class:`NotACellError` saying what to pass."""
    if isinstance(net, nn.Cell):
        return net
    got = type(net).__name__
    if isinstance(net, type) and issubclass(net, nn.Cell):
        hint = f"pass an instance, e.g. {net.__name__}(...), not the class itself"
    elif type(net).__name__ == "Model" and hasattr(net, "predict_network"):
        hint = "pass the network inside the Model, e.g. model.predict_network or model.train_network"
    elif inspect.ismethod(net) and isinstance(getattr(net, "__self__", None), nn.Cell):
        hint = f"pass the cell object itself ({type(net.__self__).__name__} instance), not its method"
    elif isinstance(net, (list, tuple)) and net and all(isinstance(c, nn.Cell) for c in net):
        hint = "wrap the cells in a container first, e.g. nn.SequentialCell(cells)"
    else:
        hint = "build your network (a subclass of mindspore.nn.Cell) and pass that object"
    raise NotACellError(f"{function}() expects a mindspore.nn.Cell as `{argument}`, got {got}: {hint}.")


def normalize_value(value: Any, where: str = "") -> Any:
    """One input value as construct() will get it (numpy arrays become Tensors), or an InputError."""
    if isinstance(value, (Tensor, *_SCALARS)):
        return value
    if isinstance(value, np.ndarray):
        return Tensor(value)
    if isinstance(value, (tuple, list)):
        return type(value)(normalize_value(v, f"{where}[{i}]") for i, v in enumerate(value))
    raise InputError(
        f"inputs{where} is a {type(value).__module__}.{type(value).__name__}; graphaudit passes "
        "`inputs` positionally to construct() and accepts mindspore.Tensor, numpy arrays, Python "
        "scalars, None, or tuples of these. Convert it, e.g. mindspore.Tensor(numpy_array)."
    )


def normalize_inputs(net: nn.Cell, inputs: Any) -> tuple[Any, ...]:
    """Turn *inputs* into the positional arguments of ``net.construct``, checking them."""
    if isinstance(inputs, dict):
        raise InputError(
            "inputs is a dict; graphaudit passes inputs positionally. Pass a tuple in the "
            "order of construct()'s parameters, e.g. inputs=(x, mask)."
        )
    args = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    args = tuple(normalize_value(v, f"[{i}]") for i, v in enumerate(args))
    try:
        signature = inspect.signature(net.construct)
    except (TypeError, ValueError):  # a construct without a Python signature
        return args
    try:
        signature.bind(*args)
    except TypeError as err:
        raise InputError(
            f"{type(net).__name__}.construct{signature} cannot take the {len(args)} input(s) "
            f"given ({describe_inputs(args)}): {err}. Pass one value per construct() parameter, "
            "as a tuple when there are several."
        ) from err
    return args


def describe_inputs(args: tuple[Any, ...]) -> str:
    """A short text like ``Tensor[1, 3, 224, 224] Float32, 0.5``."""
    parts = []
    for value in args:
        if isinstance(value, Tensor):
            parts.append(f"Tensor{list(value.shape)} {value.dtype}")
        elif isinstance(value, (tuple, list)):
            parts.append(f"({describe_inputs(tuple(value))})")
        else:
            parts.append(repr(value))
    return ", ".join(parts)


def _forward_error(net: nn.Cell, args: tuple[Any, ...], tracer: Tracer, err: Exception) -> ForwardError:
    where = tracer.failed_path
    if where is None or where == "":
        place = f"in {type(net).__name__}.construct"
    else:
        place = f"in the cell at '{where}'"
    first_lines = "\n".join(str(err).strip().splitlines()[:12]) or "(the error has no message)"
    return ForwardError(
        f"the forward pass of {type(net).__name__} raised {type(err).__name__} {place} while "
        f"graphaudit ran net(*inputs) with inputs ({describe_inputs(args)}):\n"
        f"{textwrap.indent(first_lines, '    ')}\n"
        "Check that `inputs` match what the network expects (the shape and dtype of one batch "
        "from your dataset, one value per construct() parameter) and that net(*inputs) runs on "
        "its own. The original error is chained as __cause__."
    )


def capture(
    net: nn.Cell, inputs: Any = None, *, expand: tuple[nn.Cell, ...] = ()
) -> tuple[nx.MultiDiGraph, Structure, Any]:
    """:func:`to_networkx`, also returning the object maps and the network's output.

    Cells in *expand* have the operations in their body traced even when they have no
    sub-cells (the audit uses this to see inside loss functions).
    """
    net = check_cell(net)
    graph = nx.MultiDiGraph(
        name=type(net).__name__,
        graphaudit_version=__version__,
        mindspore_version=ms.__version__,
        traced=inputs is not None,
    )
    structure = add_structure(graph, net)
    if inputs is None:
        return graph, structure, None
    args = normalize_inputs(net, inputs)
    cells = list(structure.cells.values())
    params = list(structure.parameters.values())
    with preserved(cells, params) as snapshot:
        tracer = Tracer(
            graph,
            structure,
            on_parameter_write=snapshot.save_parameter,
            expand=frozenset(id(cell) for cell in expand),
        )
        if ms.get_context("mode") != ms.PYNATIVE_MODE:
            ms.set_context(mode=ms.PYNATIVE_MODE)  # put back by preserved()
        try:
            output = trace_forward(tracer, net, args)
            synchronize()
        except Exception as err:
            raise _forward_error(net, args, tracer, err) from err
    for node, param in tracer.extra_parameters.items():
        structure.parameters[node] = param
    return graph, structure, output


def to_networkx(net: nn.Cell, inputs: Any = None) -> nx.MultiDiGraph:
    """Capture *net*'s cells and parameters, and with *inputs* a real forward pass, as a graph.

    Without ``inputs`` the graph holds the network's structure: ``cell`` and ``parameter``
    nodes with ``contains`` and ``owns`` edges, one node per *object*, so a shared cell or
    a tied parameter is one node with several incoming edges. With ``inputs`` (a Tensor,
    or a tuple passed positionally to ``construct``) one PyNative forward pass is traced
    and ``call``, ``op``, ``input`` and ``output`` nodes with ``invokes``, ``encloses``,
    ``flows`` and ``reads`` edges are added. See :mod:`graphaudit.graph` for every kind.

    The network is left exactly as it was: parameter values, ``requires_grad``, training
    flags, the global context and the random state are restored after the pass.

    Raises:
        NotACellError: *net* is not a ``mindspore.nn.Cell``.
        InputError: *inputs* cannot be passed to ``construct``.
        ForwardError: ``construct`` raised; the message names the cell where it happened.

    Example:
        >>> import graphaudit, numpy as np
        >>> from mindspore import nn, Tensor
        >>> net = nn.SequentialCell([nn.Dense(4, 8), nn.ReLU(), nn.Dense(8, 2)])
        >>> g = graphaudit.to_networkx(net, inputs=Tensor(np.ones((1, 4), np.float32)))
        >>> [n for n, d in g.nodes(data=True) if d["kind"] == "call"]
        ['call:#1', 'call:0#1', 'call:1#1', 'call:2#1']
        >>> sorted(g.successors("call:0#1"))
        ['call:1#1', 'cell:0']
    """
    return capture(net, inputs)[0]
