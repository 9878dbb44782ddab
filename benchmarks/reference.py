"""What ``reference=`` costs (issue 35): the port compared with its original, in time and in memory.

Run inside a worker subprocess started by ``benchmarks/run.py``. Two routes, the two an
original reaches the audit by:

- ``dump``: mindcv resnet18 on ``1x3x224x224`` against a folder in the layout
  ``python -m graphaudit.reference`` writes (weights under PyTorch's names, the batch, every
  module's inputs and outputs). The folder is written here from the network itself, before
  anything is timed, so the "original" is faithful by construction and no torch is needed:
  what is measured is graphaudit's side (reading the weights, the mapping, loading them into
  the port and back, the port's pass with a hook on every cell, reading each stored
  activation and comparing it as the call returns).
- ``onnx``: the ViT pair of ``tests/references/vit`` (mindone's port at a tiny config against
  transformers' ViT exported by ``torch.onnx.export``): onnxruntime runs the original with
  every module's values exposed.

Timed interleaved, after one warm-up run of each: ``forward`` (one PyNative pass in inference
mode, read with ``.asnumpy()``); for ``onnx``, ``onnxruntime`` (a session made from the file
and one run of it, what a user's own comparison would cost), for ``dump``, ``reading the
dump`` (every recorded activation read once, the stand-in for running the original); ``audit`` and ``audit +
reference``: ``audit(net, inputs=x, select=["GA63", "GA64"])`` without and with
``reference=``, what :func:`graphaudit.testing.assert_matches_reference` runs. Their
difference is what ``reference=`` adds; the target is one forward pass of the port plus one
run of the original (onnxruntime's, or reading the dump) plus the mapping.

Memory (:func:`memory_reference`, a fresh process per phase): the peak-RSS rise of the audit
with and without ``reference=``, beside the size of every activation of the original the
folder holds. The comparison streams cell by cell, so the difference stays far below what
holding every activation of both models would take.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.common import interleave, peak_rise_mib

ROOT = Path(__file__).resolve().parent.parent
SELECT = ["GA63", "GA64"]
#: MindSpore's spellings of PyTorch's parameter names, so that the dump reads as a torch original's.
_TORCH_NAMES = {
    "gamma": "weight",
    "beta": "bias",
    "moving_mean": "running_mean",
    "moving_variance": "running_var",
}


def write_dump(net: Any, inputs: tuple[Any, ...], folder: str) -> dict[str, Any]:
    """Write *net*'s own dump in ``graphaudit.reference``'s layout (what *net* computes, under torch names)."""
    import numpy as np

    from graphaudit.capture.network.recorder import flatten_tensors
    from graphaudit.reference import (
        ACTIVATIONS,
        FORMAT,
        INPUTS,
        MANIFEST,
        WEIGHTS,
        activation_key,
        write_safetensors,
    )

    os.makedirs(folder, exist_ok=True)
    weights = {}
    for name, param in net.parameters_and_names():
        head, _, leaf = name.rpartition(".")
        weights[".".join(p for p in (head, _TORCH_NAMES.get(leaf, leaf)) if p)] = param.asnumpy()
    write_safetensors(os.path.join(folder, WEIGHTS), weights)
    arrays: dict[str, Any] = {}
    calls: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    handles = []

    def before(path: str) -> Any:
        def hook(cell: Any, args: tuple[Any, ...]) -> None:
            call = counts.get(path, 0)
            for i, t in enumerate(flatten_tensors(args)):
                arrays[activation_key(path, call, "input", i)] = t.asnumpy()

        return hook

    def after(path: str) -> Any:
        def hook(cell: Any, args: tuple[Any, ...], output: Any) -> None:
            call = counts.get(path, 0)
            counts[path] = call + 1
            for i, t in enumerate(flatten_tensors(output)):
                arrays[activation_key(path, call, "output", i)] = t.asnumpy()
            calls.append({"path": path, "call": call})

        return hook

    net.set_train(False)
    for path, cell in net.cells_and_names():
        handles.append(cell.register_forward_pre_hook(before(path)))
        handles.append(cell.register_forward_hook(after(path)))
    try:
        net(*inputs)
    finally:
        for handle in handles:
            handle.remove()
    np.savez(os.path.join(folder, ACTIVATIONS), **arrays)
    np.savez(os.path.join(folder, INPUTS), **{str(i): t.asnumpy() for i, t in enumerate(inputs)})
    manifest = {"graphaudit_reference": FORMAT, "calls": calls, "ties": [], "model": type(net).__name__}
    with open(os.path.join(folder, MANIFEST), "w", encoding="utf-8") as f:
        json.dump(manifest, f)
    return {
        "calls": len(calls),
        "activations_mib": sum(a.nbytes for a in arrays.values()) / 2**20,
        "weights_mib": sum(a.nbytes for a in weights.values()) / 2**20,
    }


def _resnet(
    model: str, size: int, folder: str, batch: int = 1
) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    import mindspore as ms
    import numpy as np

    from benchmarks.model import build

    net, _, _ = build(model, size)
    shape = (batch, 4) if model.startswith("synthetic:") else (batch, 3, size, size)
    x = ms.Tensor(np.random.default_rng(0).random(shape, dtype=np.float32))
    made = write_dump(net, (x,), folder)
    return net, (x,), {"reference": folder, **made}


@contextmanager
def _vit() -> Iterator[tuple[Any, tuple[Any, ...], dict[str, Any]]]:
    sys.path.insert(0, str(ROOT / "tests"))
    from zoo import ports, shims

    with shims.for_mindone():  # mindone's mint calls without a CPU kernel, for as long as the port runs
        net = ports.build("vit")
        yield net, tuple(ports.inputs("vit", net)), {"reference": str(ports.reference_file("vit", "onnx"))}


def _onnxruntime_run(path: str, inputs: tuple[Any, ...]) -> None:
    import onnxruntime

    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    session.run(None, {name: t.asnumpy() for name, t in zip(names, inputs)})


@contextmanager
def _subject(route: str, model: str, size: int) -> Iterator[tuple[Any, tuple[Any, ...], dict[str, Any]]]:
    if route == "onnx":
        with _vit() as made:
            yield made
    else:
        with tempfile.TemporaryDirectory() as folder:
            yield _resnet(model, size, folder)


def _read_dump(folder: str) -> None:
    """Every activation the folder holds read once: the dump's stand-in for running the original."""
    import numpy as np

    from graphaudit.reference import ACTIVATIONS

    with np.load(os.path.join(folder, ACTIVATIONS), allow_pickle=False) as stored:
        for key in stored.files:
            stored[key]


def time_reference(route: str, repeats: int, model: str = "resnet18", size: int = 224) -> dict[str, Any]:
    """Warm up, then time forward / (onnxruntime) / audit / audit + reference=, interleaved."""
    import graphaudit

    started = time.perf_counter()
    with _subject(route, model, size) as (net, inputs, made):
        prepared = time.perf_counter() - started
        net.set_train(False)
        reports: dict[str, Any] = {}

        def audit(reference: bool) -> Any:
            def run() -> None:
                extra = {"reference": made["reference"]} if reference else {}
                reports[reference] = graphaudit.audit(net, inputs=inputs, select=SELECT, **extra)

            return run

        runs = {"forward": lambda: _read(net(*inputs))}
        if route == "onnx":
            runs["onnxruntime"] = lambda: _onnxruntime_run(made["reference"], inputs)
        else:
            runs["reading the dump"] = lambda: _read_dump(made["reference"])
        runs["audit"] = audit(False)
        runs["audit + reference"] = audit(True)
        for run in runs.values():
            run()
        seconds = interleave(runs, repeats)
        with_reference = reports[True]
        return {
            "route": route,
            "model": "mindone ViT (tiny config, tests/references/vit)" if route == "onnx" else model,
            "input_shapes": [list(t.shape) for t in inputs],
            "seconds": seconds,
            "prepare_seconds": prepared,
            "calls_dumped": made.get("calls"),
            "activations_mib": made.get("activations_mib"),
            "ga640_run": "GA640" in with_reference.checks_run,
            "findings": sorted(f.check_id for f in with_reference.findings),
            "not_run": {k: v for k, v in with_reference.skipped.items() if k in ("GA640",)},
        }


def _read(output: Any) -> None:
    from graphaudit.capture.network.recorder import flatten_tensors

    for tensor in flatten_tensors(output):
        tensor.asnumpy()


def memory_reference(phase: str, model: str = "resnet18", size: int = 224, batch: int = 1) -> dict[str, Any]:
    """Peak-RSS rise of ``audit(select=GA63/GA64)`` with (*phase* ``"reference"``) or without ``reference=``."""
    import graphaudit
    from benchmarks.common import import_graphaudit

    with tempfile.TemporaryDirectory() as folder:
        net, inputs, made = _resnet(model, size, folder, batch)
        net.set_train(False)
        _read(net(*inputs))  # MindSpore's own first-pass growth is not the audit's
        import_mib, _ = import_graphaudit()
        extra = {"reference": made["reference"]} if phase == "reference" else {}
        rise, reset, report = peak_rise_mib(
            lambda: graphaudit.audit(net, inputs=inputs, select=SELECT, **extra)
        )
        return {
            "phase": phase,
            "model": model,
            "peak_rise_mib": rise,
            "peak_reset": reset,
            "import_mib": import_mib,
            "batch": batch,
            "activations_mib": made["activations_mib"],
            "weights_mib": made["weights_mib"],
            "ga640_run": "GA640" in report.checks_run,
        }
