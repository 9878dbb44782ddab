"""The port run with the original's weights, each cell's output set against the original module's.

:func:`compare_outputs` loads the original's weights into the port's parameters (through the
mapping; a weight stored transposed is transposed back), runs one inference pass of the port
on the batch the original was dumped on, and, as each cell call returns, sets its outputs and
inputs against those the original's module recorded for the same call (:func:`pair_cells`
says which module is which cell). Only the figures are kept, never the activations: the
comparison streams cell by cell. Everything is put back afterwards, bit for bit, on success
and on failure (:func:`~graphaudit.capture.network.isolation.preserved`).

The figures are those msprobe's users know (:class:`Figures`): cosine similarity, the largest
absolute error and the largest relative error; a call diverges when its largest absolute
error exceeds :data:`TOLERANCE` of its dtype times the largest magnitude of the original's
output (``docs/reference.md`` says how they were chosen).

Example:
    >>> import numpy as np
    >>> f = Figures.of(np.float32([1, 2, 3]), np.float32([1, 2, 3.003]))
    >>> round(f.cosine, 6), round(f.max_abs, 4), f.diverges("float32")
    (1.0, 0.003, True)
    >>> pair_cells(["", "fc", "act"], ["", "fc", "act"], [("fc", "fc")])
    {'': '', 'fc': 'fc', 'act': 'act'}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from mindspore import Parameter, nn

    from graphaudit.capture.reference.dump_folder import Activations

__all__ = ["TOLERANCE", "CallFigures", "Comparison", "Figures", "compare_outputs", "pair_cells"]

#: The largest absolute error a call may have, as a share of the original output's largest
#: magnitude, by the port's dtype: far above the rounding of a faithful float32 port (about
#: 1e-6 on the samples and the real pairs) and far below what a wrong layer gives (1e-1 and more).
TOLERANCE = {"float32": 1e-4, "float64": 1e-8, "float16": 1e-2, "bfloat16": 3e-2}


#: Elements of a tensor compared at a time (:meth:`Figures.of`): 8 MiB per float64 temporary.
_CHUNK = 1 << 20


def _float64(values: np.ndarray, start: int) -> np.ndarray:
    return np.asarray(values[start : start + _CHUNK], np.float64)


@dataclass(frozen=True)
class Figures:
    """How far a port tensor is from the original's: msprobe's cosine, max absolute and relative errors.

    The relative error is over the elements at least 1e-3 of the original's largest magnitude.
    """

    cosine: float
    max_abs: float
    max_rel: float
    scale: float  # the largest magnitude of the original's tensor
    norm_ratio: float = 1.0  # the port tensor's norm over the original's: a factor when cosine is 1

    @classmethod
    def of(cls, port: np.ndarray, original: np.ndarray) -> Figures:
        a, b = np.asarray(port).ravel(), np.asarray(original).ravel()
        if a.size == 0:
            return cls(1.0, 0.0, 0.0, 0.0)
        # In slices of _CHUNK elements: the float64 temporaries of one whole activation would be
        # several times its size (hundreds of MB for a CNN's first layers), more than the comparison
        # keeps of both models together; the sums stay float64, so the figures do not change.
        dot = norm_a = norm_b = 0.0
        largest_errors, largest_values = [], []  # per slice; np.max of them keeps a NaN, max() would not
        for start in range(0, a.size, _CHUNK):
            x, y = _float64(a, start), _float64(b, start)
            dot += float(x @ y)
            norm_a += float(x @ x)
            norm_b += float(y @ y)
            largest_errors.append(np.abs(x - y).max())
            largest_values.append(np.abs(y).max())
        max_abs, scale = float(np.max(largest_errors)), float(np.max(largest_values))
        norms = float(np.sqrt(norm_a) * np.sqrt(norm_b))
        cosine = dot / norms if norms > 0 else (1.0 if max_abs == 0 else 0.0)
        # msprobe divides by |original| element by element; where the original is (nearly) zero,
        # after a ReLU, that is 1e38 and says nothing: those elements are left out of it here.
        max_rel = 0.0 if scale > 0 else float(max_abs > 0)
        if scale > 0:
            relative = [max_rel]
            for start in range(0, a.size, _CHUNK):
                x, y = _float64(a, start), _float64(b, start)
                counted = np.abs(y) >= 1e-3 * scale
                if counted.any():
                    relative.append(np.max(np.abs(x[counted] - y[counted]) / np.abs(y[counted])))
            max_rel = float(np.max(relative))
        ratio = float(np.sqrt(norm_a) / np.sqrt(norm_b)) if norm_b > 0 else 1.0
        return cls(cosine, max_abs, max_rel, scale, ratio)

    def diverges(self, dtype: str) -> bool:
        """Whether the error is beyond what *dtype*'s rounding makes (:data:`TOLERANCE`)."""
        tolerance = TOLERANCE.get(dtype, TOLERANCE["float32"])
        return not self.max_abs <= tolerance * max(self.scale, np.finfo(np.float32).tiny)

    def to_dict(self) -> dict[str, float | None]:
        """The figures as JSON-ready data (a NaN or an infinity, from a port output that is not finite, as None)."""
        return {name: _finite(getattr(self, name)) for name in _FIGURES}

    def text(self) -> str:
        said = f"cosine {self.cosine:.6f}, max abs error {self.max_abs:.3g}, max rel error {self.max_rel:.3g}"
        if self.cosine > 0.99999 and abs(self.norm_ratio - 1) > 1e-3:
            said += f"; the same up to a factor of {self.norm_ratio:.4g}"  # a scale forgotten or doubled
        return said


@dataclass(frozen=True)
class CallFigures:
    """One call of a port cell against the same call of its original module."""

    port: str  # the cell's path ("" for the network)
    reference: str  # the module's path
    call: int  # which call of the cell (0: the first)
    dtype: str  # the port output's dtype
    output: Figures | None  # None: no tensor of the same shape to compare
    input: Figures | None
    caller: str | None = None  # the cell whose construct made this call (None: the audit's own call)
    shapes: str = ""  # when the outputs could not be compared: both shapes
    input_shapes: str = ""  # when the inputs could not be compared: both shapes

    @property
    def diverges(self) -> bool:
        return self.output is not None and self.output.diverges(self.dtype)

    @property
    def input_agrees(self) -> bool:
        return self.input is None or not self.input.diverges(self.dtype)

    def to_dict(self) -> dict[str, Any]:
        """The call as JSON-ready data: both sides' names, its output's figures flat, its input's nested."""
        output = self.output.to_dict() if self.output is not None else dict.fromkeys(_FIGURES)
        return {
            "port": self.port,
            "reference": self.reference,
            "call": self.call,
            "dtype": self.dtype,
            "compared": self.output is not None,
            **output,
            "diverges": self.diverges,
            "input_agrees": self.input_agrees,
            "input": self.input.to_dict() if self.input is not None else None,
            "caller": self.caller,
            "shapes": self.shapes,
            "input_shapes": self.input_shapes,
        }


@dataclass(frozen=True)
class Comparison:
    """Every compared call and, in the order they happened, the events: a call given its inputs, a call returning.

    ``events`` holds ``(index into calls, "input" or "output")``; ``unpaired``: the port's
    cells no module of the original stands for.
    """

    calls: tuple[CallFigures, ...]
    events: tuple[tuple[int, str], ...]
    unpaired: tuple[str, ...]

    def first_divergence(self) -> tuple[CallFigures, str] | None:
        """The first event, in execution order, whose tensors diverge: ``(call, "input" or "output")``.

        ``"input"``: the call was given tensors that differ while everything before agreed, so
        its caller's construct made the difference; ``"output"``: the call returned tensors
        that differ while its input (and every call inside it) agreed, so it made it.
        """
        for index, at in self.events:
            call = self.calls[index]
            figures = call.input if at == "input" else call.output
            if figures is not None and figures.diverges(call.dtype):
                return call, at
            if figures is None and (call.shapes if at == "output" else call.input_shapes):
                return call, at  # another shape: a padding, a stride, a layout, a layer of its own
        return None


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


_FIGURES = ("cosine", "max_abs", "max_rel", "scale", "norm_ratio")


def pair_cells(
    port_cells: Sequence[str], modules: Sequence[str], parameter_modules: Iterable[tuple[str, str]]
) -> dict[str, str]:
    """Port cell path -> original module path.

    *parameter_modules* pairs the modules of paired parameters (``(port module, original
    module)``); the prefix most of them differ by (``model.`` against ``bert.``) pairs the
    cells without parameters (activations, dropouts, containers) whose path is the same below it.
    """
    known = set(modules)
    paired: dict[str, str] = {}
    votes: Counter[tuple[str, str]] = Counter()
    for port, original in parameter_modules:
        if original in known:
            paired.setdefault(port, original)
        a, b = port.split(".") if port else [], original.split(".") if original else []
        common = 0
        while common < min(len(a), len(b)) and a[len(a) - 1 - common] == b[len(b) - 1 - common]:
            common += 1
        votes[(".".join(a[: len(a) - common]), ".".join(b[: len(b) - common]))] += 1
    prefixes = [pair for pair, _ in votes.most_common()] + [("", "")]
    for cell in port_cells:
        if cell in paired:
            continue
        for port_prefix, original_prefix in prefixes:
            if port_prefix and cell != port_prefix and not cell.startswith(port_prefix + "."):
                continue
            rest = cell[len(port_prefix) :].lstrip(".")
            candidate = ".".join(part for part in (original_prefix, rest) if part)
            if candidate in known:
                paired[cell] = candidate
                break
    return {cell: paired[cell] for cell in port_cells if cell in paired}


def _first_same_shape(
    port: list[np.ndarray], original: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray] | None:
    """The first pair of tensors, in order, that have one shape (a port may return fewer)."""
    for a, b in zip(port, original):
        if a.shape == b.shape:
            return a, b
    return None


def _shapes(mine: list[np.ndarray], theirs: list[np.ndarray]) -> str:
    return f"{[a.shape for a in mine]} against {[b.shape for b in theirs]}"


def compare_outputs(
    net: nn.Cell,
    inputs: tuple[Any, ...],
    cells: dict[str, nn.Cell],
    loads: Sequence[tuple[Parameter, np.ndarray]],
    activations: Activations,
    pairs: dict[str, str],
    keywords: dict[str, Any] | None = None,
) -> Comparison:
    """Run *net* on *inputs* (and *keywords*) with *loads* written into its parameters; compare each call."""
    import mindspore as ms

    from graphaudit.capture.compilation.graph_mode import preserved_attributes
    from graphaudit.capture.compilation.jit import jit_disabled
    from graphaudit.capture.network.isolation import preserved, synchronize, training_flags, write_in_place
    from graphaudit.capture.network.recorder import flatten_tensors
    from graphaudit.capture.network.values import tensor_values
    from graphaudit.capture.network.wrappers import EXCLUSIVE
    from graphaudit.capture.training.step_harness import graphs_not_saved

    records: list[dict[str, Any]] = []
    events: list[tuple[int, str]] = []
    running: list[tuple[str, int | None]] = []  # the calls under way: (path, record index)
    counts: Counter[str] = Counter()

    def values(tensors: Any) -> list[np.ndarray]:
        return [tensor_values(t) for t in flatten_tensors(tensors)]

    def before(path: str) -> Any:
        def record(cell: nn.Cell, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            call = counts[path]
            counts[path] += 1
            module = pairs.get(path)
            caller = running[-1][0] if running else None
            if module is None:
                running.append((path, None))
                return
            mine, theirs = values((args, kwargs)), activations.input(module, call)
            given = _first_same_shape(mine, theirs)
            records.append(
                {
                    "port": path,
                    "reference": module,
                    "call": call,
                    "input": Figures.of(*given) if given is not None else None,
                    "caller": caller,
                    "input_shapes": _shapes(mine, theirs) if given is None and mine and theirs else "",
                }
            )
            running.append((path, len(records) - 1))
            events.append((len(records) - 1, "input"))

        return record

    def after(path: str) -> Any:
        def record(cell: nn.Cell, args: tuple[Any, ...], kwargs: dict[str, Any], output: Any) -> None:
            _, index = running.pop() if running else (path, None)
            if index is None:
                return
            entry = records[index]
            tensors = flatten_tensors(output)
            mine = [tensor_values(t) for t in tensors]
            theirs = activations.output(entry["reference"], entry["call"])
            outputs = _first_same_shape(mine, theirs)
            entry["dtype"] = str(tensors[0].dtype).lower() if tensors else "float32"
            entry["output"] = Figures.of(*outputs) if outputs is not None else None
            if outputs is None and mine and theirs:
                entry["shapes"] = _shapes(mine, theirs)
            events.append((index, "output"))

        return record

    params = list({id(p): p for p, _ in loads}.values())
    with (
        ExitStack() as stack,
        EXCLUSIVE,
        graphs_not_saved(),
        preserved(list(cells.values()), params) as snapshot,
    ):
        snapshot.save_now(params)
        if ms.get_context("mode") != ms.PYNATIVE_MODE:
            ms.set_context(mode=ms.PYNATIVE_MODE)  # put back by preserved()
        for param, value in loads:
            write_in_place(param, value)
        handles = []
        try:
            stack.enter_context(preserved_attributes(list(cells.values())))  # hooks change cell attributes
            for path, cell in cells.items():
                handles.append(cell.register_forward_pre_hook(before(path), with_kwargs=True))
                handles.append(cell.register_forward_hook(after(path), with_kwargs=True))
            with jit_disabled(), training_flags(net, False):
                net(*inputs, **(keywords or {}))
                synchronize()
        finally:
            for handle in handles:
                handle.remove()
            activations.close()
    unpaired = tuple(path for path in cells if path not in pairs)
    calls = tuple(
        CallFigures(
            r["port"],
            r["reference"],
            r["call"],
            r.get("dtype", "float32"),
            r.get("output"),
            r["input"],
            r["caller"],
            r.get("shapes", ""),
            r["input_shapes"],
        )
        for r in records
    )
    return Comparison(calls, tuple(events), unpaired)
